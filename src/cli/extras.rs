//! `handshake completions SHELL` and `handshake man --out DIR`: the shell
//! integration a command-line tool is expected to ship, both generated from
//! the one definition of the command line (clap's), so they cannot drift
//! from it.

use super::{Cli, EXIT_BAD_INPUT, EXIT_OK};
use clap::{Args, CommandFactory};
use std::path::PathBuf;

pub const COMPLETION_EXAMPLES: &[(&str, &str)] = &[
    ("handshake completions bash > ~/.local/share/bash-completion/completions/handshake", "bash"),
    ("handshake completions zsh > ~/.zfunc/_handshake", "zsh (with ~/.zfunc on fpath)"),
    ("handshake completions fish > ~/.config/fish/completions/handshake.fish", "fish"),
];

pub const MAN_EXAMPLES: &[(&str, &str)] = &[
    ("handshake man --out man/", "man/handshake.1, man/handshake-run.1, ..."),
    ("man -l man/handshake-run.1", "read one"),
];

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Folder to write the pages to (made if missing)
    #[arg(long, value_name = "DIR", default_value = "man")]
    pub out: PathBuf,
}

pub fn completions(a: CompletionsArgs) -> i32 {
    let mut cmd = Cli::command();
    clap_complete::generate(a.shell, &mut cmd, "handshake", &mut std::io::stdout());
    EXIT_OK
}

/// The pages: `handshake.1`, then `handshake-<sub>.1` for each subcommand.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>, String> {
    let cmd = Cli::command();
    let mut out = Vec::new();
    let mut render = |name: String, c: clap::Command| -> Result<(), String> {
        let mut bytes = Vec::new();
        clap_mangen::Man::new(c).render(&mut bytes).map_err(|e| format!("{name}: {e}"))?;
        out.push((name, bytes));
        Ok(())
    };
    render("handshake.1".into(), cmd.clone())?;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        // The page's title is the whole command, as `man handshake-run` finds it.
        // clap names commands with 'static text: the few page names leak once.
        let name: &'static str = Box::leak(format!("handshake-{}", sub.get_name()).into_boxed_str());
        render(format!("{name}.1"), sub.clone().name(name).bin_name(format!("handshake {}", sub.get_name())))?;
    }
    Ok(out)
}

pub fn man(a: ManArgs) -> i32 {
    let pages = match pages() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}; nothing was written");
            return EXIT_BAD_INPUT;
        }
    };
    // A link where the folder would be (to nothing, or to a folder
    // elsewhere) is not followed, as no output is written through one.
    if std::fs::symlink_metadata(&a.out).is_ok_and(|m| m.file_type().is_symlink()) {
        eprintln!("error: {} is a symbolic link: name a folder; nothing was written", a.out.display());
        return EXIT_BAD_INPUT;
    }
    if let Err(e) = std::fs::create_dir_all(&a.out) {
        eprintln!("error: {}: {e}; nothing was written", a.out.display());
        return EXIT_BAD_INPUT;
    }
    // Every page checked before the first is written: a set is written
    // whole or not at all.
    if let Some(e) = pages.iter().find_map(|(name, _)| crate::output::check(&a.out.join(name)).err()) {
        eprintln!("error: {e}; nothing was written");
        return EXIT_BAD_INPUT;
    }
    for (name, bytes) in &pages {
        let path = a.out.join(name);
        if let Err(e) = crate::output::write_bytes(&path, bytes) {
            eprintln!("error: {e}");
            return EXIT_BAD_INPUT;
        }
    }
    println!("wrote {} man pages to {}: man -l {}/handshake.1", pages.len(), a.out.display(), a.out.display());
    EXIT_OK
}
