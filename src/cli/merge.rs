//! `handshake merge`: the shards of one sweep, each `handshake run --seeds
//! A..B --shard I/N --format json`, read and combined by the library into the
//! report the whole sweep prints, and printed.

use super::bad_input::{Problem, Refusal};
use super::Format;
use crate::sweep::merge::{merge, read};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' `--format json` outputs, one file each, all N of them, in any order (`-`: stdin)
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Output for people (text) or machines (json: one document on stdout, bad input as an error object; docs/json.md)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub const MERGE_EXAMPLES: &[(&str, &str)] = &[
    ("handshake merge out/shard-*.json", "the sweep's report, as one run would print it"),
    ("handshake merge out/*.json --format json", "the same as one JSON document"),
];

pub fn main(a: MergeArgs) -> i32 {
    let mut docs = Vec::new();
    for f in &a.files {
        // `-` is stdin, as for most tools that read files (one report piped in).
        let path = if f.as_os_str() == "-" { std::path::Path::new("/dev/stdin") } else { f.as_path() };
        match read(path) {
            Ok(d) => docs.push((f.display().to_string(), d)),
            Err(e) => {
                let line = format!("{e}; nothing was merged");
                return Refusal::line(line, Problem::in_file(f.display(), e)).tell(a.format);
            }
        }
    }
    match merge(&docs) {
        Ok(doc) => super::sweep::print(&doc, a.format),
        Err(e) => Refusal::line(format!("{e}; nothing was merged"), Problem::new(e)).tell(a.format),
    }
}
