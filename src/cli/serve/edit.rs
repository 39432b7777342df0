//! The page's editor: a scenario's text read as `check` reads a file, and
//! saved only when asked, to the file the server was given and nowhere
//! else; and the checks that keep other pages from asking.

use super::Setup;
use crate::explore::by_hand::ByHand;
use crate::scenario::Scenario;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The scenario file a page edits: where it is, and its text as last read
/// or saved, to tell whether another program changed it since.
pub(super) struct File {
    path: PathBuf,
    on_disk: String,
}

/// Why a save did not happen: 409 when the file changed on disk since it
/// was read (saving would lose that change unless asked to overwrite it).
pub(super) struct Refused {
    pub status: u16,
    pub why: String,
}

impl File {
    /// The file and its text, read as every command reads a scenario.
    pub fn open(path: &Path) -> Result<(File, String), String> {
        let text = crate::scenario::read_file(path).map_err(|e| e.to_string())?;
        Ok((File { path: path.to_path_buf(), on_disk: text.clone() }, text))
    }

    /// Why no save may write this file, if none may: a symbolic link is
    /// never written through, and a bundled scenario is part of the program.
    pub fn never_saved(&self) -> Option<String> {
        if let Some(b) = crate::format::bundled::by_path(&self.path) {
            let n = b.number().map_or_else(|| b.short().to_string(), |n| n.to_string());
            return Some(format!(
                "{} is bundled with the program, not a file; `handshake new --from {n} my.toml` writes a copy to \
                 edit, and `handshake explore my.toml --serve` serves it",
                self.shown()
            ));
        }
        std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_symlink()).then(|| {
            format!(
                "{} is a symbolic link, and a save never writes through one (the file it points to may be anyone's); \
                 copy the text into a file of your own and serve that",
                self.shown()
            )
        })
    }

    /// The file as the page and the problems name it.
    pub fn shown(&self) -> String {
        self.path.display().to_string()
    }

    /// Writes `text` as the whole file (beside it, then renamed; never
    /// through a symbolic link), unless the file changed on disk since it
    /// was read and `overwrite` is not given.
    pub fn save(&mut self, text: &str, overwrite: bool) -> Result<(), Refused> {
        if let Some(why) = self.never_saved() {
            return Err(Refused { status: 403, why: format!("not saved: {why}") });
        }
        let now = crate::scenario::read_file(&self.path).ok();
        if !overwrite && now.as_deref() != Some(&self.on_disk) {
            let why = match now {
                Some(_) => "changed on disk since this page read it",
                None => "can no longer be read as it was when this page read it",
            };
            return Err(Refused {
                status: 409,
                why: format!(
                    "not saved: {} {why}; saving would lose that change (keep your text, look at the file, and save \
                     again to overwrite it)",
                    self.shown()
                ),
            });
        }
        crate::output::write(&self.path, text).map_err(|e| Refused { status: 500, why: format!("not saved: {e}") })?;
        self.on_disk = text.to_string();
        Ok(())
    }
}

/// `text` read with the ordinary reader, fit to walk with the command
/// line's budgets; else its problems as `check` prints them (without
/// colour: the page shows them as text).
pub(super) fn walkable(path: &str, text: &str, setup: &Setup) -> Result<(Scenario, ByHand), String> {
    let mut scenario =
        crate::scenario::load_str(path, text).map_err(|errors| crate::diagnostic::render_all(&errors, false))?;
    if let Some(why) = crate::explore::too_big(&scenario) {
        return Err(format!("error: {path}: {why}\n"));
    }
    // A path a person takes ends where they stop: the file's own
    // expectations, about a whole run, would fail on most of them. The
    // oracle judges each state.
    scenario.expects.clear();
    let budgets = setup.flags.with_file_faults(&scenario, setup.without_file_faults);
    let title = if scenario.name.is_empty() { scenario.path.clone() } else { scenario.name.clone() };
    let by_hand = ByHand::new(&scenario, &title, budgets);
    Ok((scenario, by_hand))
}

/// What the page sends to apply or save: the editor's text.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Edit {
    pub text: String,
    /// Save even though the file changed on disk since it was read.
    #[serde(default)]
    pub overwrite: bool,
}

impl Edit {
    /// The request's body, read up to what a scenario file may hold (with
    /// room for JSON's escapes): a status and the reason if it is not one.
    pub fn read(request: &mut tiny_http::Request) -> Result<Edit, (u16, String)> {
        // A browser sends JSON only to its own page's server unless that
        // server agrees (it never does here): another site's page can send
        // a form, never this.
        let json = request
            .headers()
            .iter()
            .any(|h| h.field.equiv("Content-Type") && h.value.as_str().trim_start().starts_with("application/json"));
        if !json {
            return Err((415, "an edit is sent as application/json: {\"text\": …}".to_string()));
        }
        let limit = 6 * crate::format::file::limits::MAX_FILE_BYTES as u64 + 1024;
        let mut body = String::new();
        let read = request.as_reader().take(limit + 1).read_to_string(&mut body);
        if read.is_err() {
            return Err((400, "the edit is not UTF-8 text".to_string()));
        }
        if body.len() as u64 > limit {
            return Err((413, "the edit is longer than a scenario file may be".to_string()));
        }
        serde_json::from_str(&body).map_err(|e| (400, format!("the edit is not {{\"text\": …}}: {e}")))
    }
}

/// Whether `request` comes from a page served here. A page on another site
/// can make the browser ask this server things, and with a name of its own
/// that points here (DNS rebinding) read the answers and send edits: so a
/// request must name this server by an address (`127.0.0.1:PORT`, any
/// address written as numbers) or as `localhost`, never by another name,
/// and, if the browser says which page sent it, come from this server's
/// own page.
pub(super) fn from_here(request: &tiny_http::Request, served: std::net::SocketAddr) -> Result<(), String> {
    let header =
        |name: &'static str| request.headers().iter().find(|h| h.field.equiv(name)).map(|h| h.value.to_string());
    let host = header("Host").unwrap_or_default();
    let by_address = host.parse::<std::net::SocketAddr>().is_ok_and(|a| a.port() == served.port());
    let by_localhost = host.strip_prefix("localhost:").is_some_and(|p| p.parse() == Ok(served.port()));
    if !by_address && !by_localhost {
        return Err(format!(
            "the request names {host:?} as its host: this page is served as {served} (or localhost:{}), and a name \
             that is not this machine's may be another site's",
            served.port()
        ));
    }
    match header("Origin") {
        Some(origin) if origin != format!("http://{host}") => {
            Err(format!("a page from {origin} may not use this server: open http://{host}/ itself"))
        }
        _ => Ok(()),
    }
}
