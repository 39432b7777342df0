//! The docs' excerpts are what the program prints (issue 22, point 5).
//!
//! An excerpt is a code block right after a marker that says which command
//! printed it:
//!
//! ````text
//! <!-- output of: handshake run scenarios/01-happy-shutdown.toml -v -->
//! ```
//!      1.001s  lead ⇒ alice  shutdown_request [stop-alice]
//! ...
//!      1.002s  lead: [stop-alice] pending → approved
//! ```
//! ````
//!
//! The command runs in `sh` from the project's root, with this build's
//! `handshake` first on the `PATH` and stderr after stdout; `/tmp/` in it
//! is a scratch folder of the test's (and printed back as `/tmp/`). The
//! block's lines must appear in the output in order; lines not separated
//! by `...` must follow each other there. Wall-clock figures (`0.17 ms
//! real`) are not compared. After an intended change of the program's
//! words or times, regenerate every excerpt with
//!
//!     UPDATE_DOCS=1 cargo test --test docs
//!
//! which keeps each excerpt's choice of lines and takes their text from the
//! new output (matched with the numbers masked), and review the diff.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The files whose excerpts are checked.
const DOCS: &[&str] = &[
    "docs/learn.md",
    "docs/exercises.md",
    "README.md",
    "docs/history.md",
    "docs/audit.md",
    "docs/json.md",
    "docs/claude-code.md",
];

const MARKER: &str = "<!-- output of: ";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One excerpt: where its block's lines are in the file, and its command.
struct Excerpt {
    /// The marker's line number (1-based), for messages.
    line: usize,
    command: String,
    /// Index of the block's first and one-past-last content line.
    body: (usize, usize),
}

fn excerpts(lines: &[&str], file: &str) -> Vec<Excerpt> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(rest) = l.trim().strip_prefix(MARKER) else { continue };
        let command = rest.strip_suffix("-->").unwrap_or_else(|| panic!("{file}:{}: a marker ends with -->", i + 1));
        let open = i + 1;
        assert!(
            lines.get(open).is_some_and(|l| l.trim_start().starts_with("```")),
            "{file}:{}: a marker is followed at once by a code block",
            i + 1
        );
        let close = (open + 1..lines.len())
            .find(|&k| lines[k].trim_start().starts_with("```"))
            .unwrap_or_else(|| panic!("{file}:{}: the block is never closed", i + 1));
        // An empty excerpt would match any output: it shows nothing.
        assert!(close > open + 1, "{file}:{}: an excerpt's block holds at least a line of the output", i + 1);
        out.push(Excerpt { line: i + 1, command: command.trim().to_string(), body: (open + 1, close) });
    }
    out
}

/// Code blocks with no language that no marker names: an excerpt must say
/// where it comes from (a drawing or a listing says `text`, a command `sh`).
fn unmarked(lines: &[&str], file: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut open = false;
    for (i, l) in lines.iter().enumerate() {
        let Some(tag) = l.trim_start().strip_prefix("```") else { continue };
        if !open && tag.trim().is_empty() && !lines[..i].last().is_some_and(|p| p.trim().starts_with(MARKER)) {
            out.push(format!("{file}:{}: a code block with no `{MARKER}...-->` before it nor a language", i + 1));
        }
        open = !open;
    }
    out
}

/// What the command prints, stdout then stderr, `/tmp/` given back its name.
fn output_of(command: &str, scratch: &Path) -> Vec<String> {
    output_in(command, scratch, &root())
}

/// [`output_of`], run in the folder `cwd`.
fn output_in(command: &str, scratch: &Path, cwd: &Path) -> Vec<String> {
    let bin = common::binary::bin();
    let dir = bin.parent().expect("the binary's folder").to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("a PATH");
    let tmp = format!("{}/", scratch.display());
    let run = command.replace("/tmp/", &tmp);
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{{ {run} ; }} 2>&1"))
        .current_dir(cwd)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        // As a user who installed it runs it: `cargo test` tells the program
        // its package name, and it would then print its hints as `cargo run
        // --release -- run …`, the way to run it again from the source.
        .env_remove("CARGO_PKG_NAME")
        .output()
        .unwrap_or_else(|e| panic!("sh must run: {e}"));
    String::from_utf8_lossy(&out.stdout).replace(&tmp, "/tmp/").lines().map(str::to_string).collect()
}

/// A line with what changes from run to run masked: the wall-clock time.
fn steady(line: &str) -> String {
    let words: Vec<&str> = line.split(' ').collect();
    let mut out = Vec::with_capacity(words.len());
    for (k, w) in words.iter().enumerate() {
        let unit = words.get(k + 1).copied();
        let real = words.get(k + 2).copied();
        if w.parse::<f64>().is_ok() && matches!(unit, Some("ms" | "s" | "µs")) && real == Some("real") {
            out.push("#");
        } else {
            out.push(w);
        }
    }
    out.join(" ")
}

/// A line's shape: every number masked and runs of spaces made one, so a
/// line whose times or counts changed is still found.
fn shape(line: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in line.chars() {
        if c.is_ascii_digit() || (in_number && c == '.') {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            if c == ' ' && out.ends_with(' ') {
                continue;
            }
            out.push(c);
        }
    }
    out.trim().to_string()
}

/// The excerpt's runs of consecutive lines (`...` separates them).
fn runs(body: &[&str]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for l in body {
        if l.trim() == "..." {
            out.push(Vec::new());
        } else {
            out.last_mut().expect("one run at least").push(l.to_string());
        }
    }
    out.retain(|r| !r.is_empty());
    out
}

/// Where each run starts in `output`, in order, comparing lines by `key`.
fn place(runs: &[Vec<String>], output: &[String], key: fn(&str) -> String) -> Result<Vec<usize>, String> {
    let mut at = 0;
    let mut starts = Vec::new();
    for r in runs {
        let want: Vec<String> = r.iter().map(|l| key(l)).collect();
        let found = (at..output.len().saturating_sub(want.len() - 1))
            .find(|&s| want.iter().enumerate().all(|(k, w)| key(&output[s + k]) == *w));
        match found {
            Some(s) => {
                starts.push(s);
                at = s + want.len();
            }
            None => return Err(r[0].clone()),
        }
    }
    Ok(starts)
}

#[test]
fn every_excerpt_in_the_docs_is_what_the_program_prints() {
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    let scratch = std::env::temp_dir().join(format!("handshake-docs-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("a scratch folder");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in DOCS {
        let text = std::fs::read_to_string(root().join(file)).expect("the doc");
        let lines: Vec<&str> = text.lines().collect();
        let mut new: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        wrong.extend(unmarked(&lines, file));
        // From the last excerpt back, so that a regenerated one of another
        // length leaves the places of those before it as they were.
        for e in excerpts(&lines, file).into_iter().rev() {
            checked += 1;
            let output = output_of(&e.command, &scratch);
            let runs = runs(&lines[e.body.0..e.body.1]);
            let Err(first) = place(&runs, &output, steady) else { continue };
            if !update {
                wrong.push(format!(
                    "{file}:{}: `{}` no longer prints\n    {first}\n  (or not in this order); it prints:\n{}",
                    e.line,
                    e.command,
                    output.iter().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
                ));
                continue;
            }
            match place(&runs, &output, shape) {
                Ok(starts) => {
                    let mut fresh = Vec::new();
                    for (k, (r, s)) in runs.iter().zip(starts).enumerate() {
                        if k > 0 {
                            fresh.push("...".to_string());
                        }
                        fresh.extend(output[s..s + r.len()].iter().cloned());
                    }
                    new.splice(e.body.0..e.body.1, fresh);
                }
                Err(first) => wrong.push(format!(
                    "{file}:{}: `{}`: no line like\n    {first}\n  is printed any more: rewrite the excerpt by hand",
                    e.line, e.command
                )),
            }
        }
        let mut out = new.join("\n");
        out.push('\n');
        if update && out != text {
            std::fs::write(root().join(file), out).expect("the doc is writable");
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(checked >= 20, "only {checked} excerpts are marked");
    assert!(wrong.is_empty(), "{} excerpts differ from the program:\n\n{}", wrong.len(), wrong.join("\n\n"));
}

#[test]
fn an_excerpt_is_found_by_its_lines_in_order_and_regenerated_by_its_shape() {
    let output: Vec<String> = ["  1s  a asks b", "  1s  b answers", "  2s  done", "FAIL x  0.17 ms real"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let excerpt = |body: &[&str]| runs(body);
    assert!(place(&excerpt(&["  1s  a asks b", "...", "  2s  done"]), &output, steady).is_ok());
    // Consecutive lines must be consecutive in the output.
    assert!(place(&excerpt(&["  1s  a asks b", "  2s  done"]), &output, steady).is_err());
    // In order.
    assert!(place(&excerpt(&["  2s  done", "...", "  1s  b answers"]), &output, steady).is_err());
    // The wall clock is not compared; virtual times are.
    assert!(place(&excerpt(&["FAIL x  0.99 ms real"]), &output, steady).is_ok());
    assert!(place(&excerpt(&["  3s  done"]), &output, steady).is_err());
    // A drifted time is found by its shape, to be regenerated.
    assert_eq!(place(&excerpt(&["    30s  done"]), &output, shape), Ok(vec![2]));
}

/// GitHub's anchor for a heading: lower case, punctuation other than `-`
/// and `_` dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The relative links of a Markdown text: `](target)`, web addresses left out.
fn links(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|t| !t.starts_with("http://") && !t.starts_with("https://") && !t.starts_with("mailto:"))
        .map(str::to_string)
        .collect()
}

/// A reader who follows a link from the README or the docs lands on a file
/// that exists, at a heading that exists (moving text to docs/ broke
/// neither when this was written; the next move is held by this).
#[test]
fn every_link_in_the_readme_and_the_docs_leads_somewhere() {
    let mut pages = vec![root().join("README.md")];
    // The docs and the measurement logs kept apart from them (docs/measured/).
    for folder in ["docs", "docs/measured"] {
        for entry in std::fs::read_dir(root().join(folder)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    let mut broken = Vec::new();
    let mut followed = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for link in links(&text) {
            followed += 1;
            let (file, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
            if !target.exists() {
                broken.push(format!("{}: {link}: no such file", page.display()));
                continue;
            }
            if fragment.is_empty() || target.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let body = std::fs::read_to_string(&target).unwrap();
            let known = body.lines().filter_map(|l| l.strip_prefix('#')).map(|h| anchor(h.trim_start_matches('#')));
            if !known.into_iter().any(|a| a == fragment) {
                broken.push(format!("{}: {link}: no heading with that anchor", page.display()));
            }
        }
    }
    assert!(followed > 50, "only {followed} links found: the link reader is broken");
    assert!(broken.is_empty(), "links that lead nowhere:\n{}", broken.join("\n"));
}

#[test]
fn an_anchor_is_the_heading_as_github_writes_it() {
    assert_eq!(anchor(" The oracle: always-on invariants"), "the-oracle-always-on-invariants");
    assert_eq!(anchor("The JSON a sweep writes"), "the-json-a-sweep-writes");
    assert_eq!(links("see [a](b.md#c) and [d](https://e) and [f](g.svg)"), ["b.md#c", "g.svg"]);
}

/// Issue 44, point 2: the tour works with an installed binary, from a
/// folder with no scenarios/ in it: every command of docs/learn.md (and of
/// its exercises) run
/// there prints the same excerpt (the scenarios it names are the bundled
/// ones).
#[test]
fn the_tour_works_from_any_folder_with_the_installed_binary() {
    let scratch = std::env::temp_dir().join(format!("handshake-docs-away-{}", std::process::id()));
    let away = scratch.join("elsewhere");
    std::fs::create_dir_all(&away).expect("a folder with no scenarios/");
    let mut wrong = Vec::new();
    for page in ["docs/learn.md", "docs/exercises.md"] {
        let text = std::fs::read_to_string(root().join(page)).expect("the tour");
        let lines: Vec<&str> = text.lines().collect();
        for e in excerpts(&lines, page) {
            let output = output_in(&e.command, &scratch, &away);
            if let Err(first) = place(&runs(&lines[e.body.0..e.body.1]), &output, steady) {
                let said = output.join("\n");
                wrong.push(format!("{page}:{}: `{}` run elsewhere lacks {first:?}:\n{said}", e.line, e.command));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// Issue 44, point 1: the reference of every key a scenario file takes is
/// generated from the table the reader is held to (`format::reference`), so
/// the page cannot drift from the reader: it is what `handshake scenarios
/// --keys` prints, byte for byte (`UPDATE_DOCS=1` writes it again).
#[test]
fn the_key_reference_is_the_generated_one() {
    let path = root().join("docs/reference.md");
    let generated = handshake::format::reference::markdown();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &generated).expect("docs/reference.md written");
    }
    let on_disk = std::fs::read_to_string(&path).expect("docs/reference.md");
    assert!(
        on_disk == generated,
        "docs/reference.md is not the generated page: run `handshake scenarios --keys > docs/reference.md`"
    );
    let printed = common::binary::handshake(&["scenarios", "--keys"]);
    assert_eq!(printed.stdout, generated, "the command prints the same page");
}

/// Words a person reads on a page: the program's output markers (HTML
/// comments naming the command an excerpt comes from) are not read.
fn words_read(text: &str) -> usize {
    text.lines().filter(|l| !l.trim_start().starts_with(MARKER)).map(|l| l.split_whitespace().count()).sum()
}

/// Issue 44, point 1: docs a person reads. No page is over 3,000 words but
/// the generated key reference, which is looked up, not read.
#[test]
fn no_page_a_person_reads_is_over_three_thousand_words() {
    const LOOKED_UP: &[&str] = &["reference.md"];
    let mut over = Vec::new();
    for folder in ["docs", "docs/measured"] {
        for entry in std::fs::read_dir(root().join(folder)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.extension().is_none_or(|e| e != "md") || (folder == "docs" && LOOKED_UP.contains(&name.as_str())) {
                continue;
            }
            let words = words_read(&std::fs::read_to_string(&path).unwrap());
            if words > 3000 {
                over.push(format!("{folder}/{name}: {words} words"));
            }
        }
    }
    let readme = words_read(&std::fs::read_to_string(root().join("README.md")).unwrap());
    assert!(readme <= 3000, "README.md: {readme} words");
    assert!(over.is_empty(), "pages over 3,000 words:\n{}", over.join("\n"));
}

/// docs/bundled.md lists every bundled scenario, and nothing else (it had
/// drifted: four were missing when this test came).
#[test]
fn the_bundled_page_lists_every_bundled_scenario() {
    let page = std::fs::read_to_string(root().join("docs/bundled.md")).unwrap();
    let listed: std::collections::BTreeSet<String> =
        page.lines().filter_map(|l| l.strip_prefix("| `")?.split_once('`').map(|(stem, _)| stem.to_string())).collect();
    let bundled: std::collections::BTreeSet<String> =
        common::bundled_files().iter().map(|f| f.file_stem().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(listed, bundled, "docs/bundled.md against scenarios/");
}

/// Where the README or a doc counts the bundled scenarios ("the 51 bundled
/// scenarios"), the count is today's (it said 51 when there were 58).
#[test]
fn every_count_of_the_bundled_scenarios_is_right() {
    let bundled = common::bundled_files().len();
    let mut wrong = Vec::new();
    let mut pages = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        pages.push(entry.unwrap().path());
    }
    for page in pages.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
        let text = std::fs::read_to_string(page).unwrap();
        let words: Vec<&str> = text.split_whitespace().collect();
        for w in words.windows(3) {
            let counted = w[0].parse::<usize>().ok().filter(|_| w[1] == "bundled" && w[2].starts_with("scenarios"));
            if let Some(n) = counted.filter(|n| *n != bundled) {
                wrong.push(format!("{}: \"{} {} {}\"", page.display(), n, w[1], w[2]));
            }
        }
    }
    assert!(wrong.is_empty(), "{bundled} scenarios are bundled, yet:\n{}", wrong.join("\n"));
}
