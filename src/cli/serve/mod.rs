//! `explore FILE --serve [ADDR]`: a page on which a person takes the
//! explorer's choices one by one (`explore::by_hand`), served on this
//! machine only unless another address is named.
//!
//! tiny_http: blocking, no async runtime of its own. Its own threads take
//! connections (so two tabs are two connections) and this one answers each
//! request in turn: the page is one person's, and a click is answered in
//! milliseconds. Its few dependencies keep the build light (axum would
//! bring hyper and a second runtime beside actix's).
//!
//! The server reads and writes nothing but the scenario it was given: it
//! reads it at the start and at a "save" (to see whether another program
//! changed it), and writes it only at a "save" (`edit`).

mod edit;

use crate::explore::by_hand::{parse_path, Bound, ByHand, Risk};
use crate::explore::Budgets;
use crate::scenario::Scenario;
use std::path::Path;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The page: one file, its text from the server's JSON set with
/// `textContent` and `value` only, so nothing a scenario holds can run as
/// markup.
const PAGE: &str = include_str!("page.html");

/// States the background search looks at from each state a page shows,
/// over all its choices: what bounds its time.
const RISK_BUDGET: usize = 20_000;

/// At most this many states' findings are kept; then the oldest go.
const MAX_KNOWN: usize = 512;

/// What the command line says of every walk: the budgets of what may go
/// wrong, and the memory the background search may bring the process to.
pub struct Setup {
    /// The flags' budgets, before the file's own faults are added to them.
    pub flags: Budgets,
    pub without_file_faults: bool,
    pub max_memory: Option<u64>,
}

/// The scenario being walked, as last read cleanly.
struct Walked {
    scenario: Scenario,
    source: String,
    by_hand: Arc<ByHand>,
    /// 1 for the file as first read, one more at each edit applied: a tab
    /// that sees it change knows the scenario changed under it.
    generation: u64,
}

/// What the background search has found, by path (as the URL writes it),
/// in the walk of one generation.
#[derive(Default)]
struct Known {
    generation: u64,
    risks: std::collections::HashMap<String, Vec<Risk>>,
    asked: std::collections::HashSet<String>,
}

/// A state whose risks a page asked for.
struct Asked {
    generation: u64,
    path: String,
    by_hand: Arc<ByHand>,
}

/// The server's side of the page: the file, the walk, what is known.
struct Server<'a> {
    setup: &'a Setup,
    file: edit::File,
    walked: Walked,
    known: &'a Mutex<Known>,
    ask: Sender<Asked>,
    /// The address the page is served on, for the Host check (`edit::from_here`).
    served: std::net::SocketAddr,
}

/// An answer: status, content type, body.
struct Reply(u16, &'static str, String);

const JSON: &str = "application/json; charset=utf-8";
const HTML: &str = "text/html; charset=utf-8";

impl Reply {
    fn json(v: &serde_json::Value) -> Reply {
        Reply(200, JSON, v.to_string())
    }
    fn error(status: u16, text: &str) -> Reply {
        Reply(status, JSON, serde_json::json!({ "error": text }).to_string())
    }
}

/// Serves a walk of the scenario at `path` on `addr` until Ctrl-C; the
/// exit status.
pub fn serve(path: &Path, setup: &Setup, addr: &str) -> i32 {
    let (file, source) = match edit::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}; nothing was served");
            return super::EXIT_BAD_INPUT;
        }
    };
    let walked = match edit::walkable(&file.shown(), &source, setup) {
        Ok((scenario, by_hand)) => Walked { scenario, source, by_hand: Arc::new(by_hand), generation: 1 },
        Err(said) => {
            eprint!("{said}");
            eprintln!("nothing was served: fix the file above");
            return super::EXIT_BAD_INPUT;
        }
    };
    let http = match tiny_http::Server::http(addr) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: --serve {addr}: cannot listen there: {e}; nothing was served");
            return super::EXIT_BAD_INPUT;
        }
    };
    let Some(served) = http.server_addr().to_ip() else {
        eprintln!("error: --serve {addr}: not an address with a port; nothing was served");
        return super::EXIT_BAD_INPUT;
    };
    println!("exploring by hand at http://{served}/ (Ctrl-C to stop)");
    if !served.ip().is_loopback() {
        // The page can save the scenario file: whoever reaches the port can.
        eprintln!(
            "warning: --serve {addr} listens beyond this machine: anyone who can reach {served} can open the page \
             and save the scenario through it; give 127.0.0.1:PORT to keep it local"
        );
    }
    crate::interrupt::install();
    let known = Mutex::new(Known { generation: 1, ..Known::default() });
    let (ask, asked) = std::sync::mpsc::channel::<Asked>();
    std::thread::scope(|scope| {
        // The checker: searches from each state a page asks about, the
        // latest first, while the server answers clicks.
        scope.spawn(|| search_in_the_background(&known, asked, setup.max_memory));
        let mut server = Server { setup, file, walked, known: &known, ask, served };
        server.answer_until_stopped(&http)
        // `server` goes here, and with it the channel: the search ends.
    })
}

fn search_in_the_background(known: &Mutex<Known>, asked: Receiver<Asked>, max_memory: Option<u64>) {
    // Memory is looked at as the search goes (the process's, which is what
    // --max-memory bounds): the search stops where what it took since the
    // last look, taken once more, would pass the bound, and a search
    // stopped so finds its risks unknown.
    let last = std::cell::Cell::new(None::<u64>);
    let room = || {
        let (Some(limit), Some(used)) = (max_memory, crate::process::resident_memory()) else { return true };
        let since = last.replace(Some(used)).map_or(0, |before| used.saturating_sub(before));
        used.saturating_add(since) <= limit
    };
    while let Ok(mut next) = asked.recv() {
        // Only the latest asked: a page moved on from the others, which
        // are forgotten as asked (a page that comes back asks again).
        while let Ok(later) = asked.try_recv() {
            let skipped = std::mem::replace(&mut next, later);
            let mut k = known.lock().unwrap_or_else(|p| p.into_inner());
            if k.generation == skipped.generation {
                k.asked.remove(&skipped.path);
            }
        }
        let Ok(steps) = parse_path(&next.path) else { continue };
        let risks = next.by_hand.risks_within(&steps, RISK_BUDGET, &room);
        let mut k = known.lock().unwrap_or_else(|p| p.into_inner());
        if k.generation != next.generation {
            continue;
        }
        // A path that leads nowhere is answered so by the view, not here.
        let Ok(risks) = risks else {
            k.asked.remove(&next.path);
            continue;
        };
        if k.risks.len() >= MAX_KNOWN {
            k.risks.clear();
            k.asked.clear();
        }
        k.risks.insert(next.path, risks);
    }
}

impl Server<'_> {
    fn answer_until_stopped(&mut self, http: &tiny_http::Server) -> i32 {
        loop {
            if crate::interrupt::requested() {
                println!("stopped: the page is no longer served");
                return super::EXIT_INTERRUPTED;
            }
            let mut request = match http.recv_timeout(Duration::from_millis(200)) {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(e) => {
                    eprintln!("error: the server stopped: {e}");
                    return super::EXIT_FAILED;
                }
            };
            let Reply(status, kind, body) = match edit::from_here(&request, self.served) {
                Ok(()) => self.answer(&mut request),
                Err(why) => Reply::error(403, &why),
            };
            let header =
                |k: &str, v: &str| tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()).expect("a valid header");
            // No other site may frame the page (to have a person click
            // "save anyway" unawares); its own stepper frame may.
            let response = tiny_http::Response::from_string(body)
                .with_status_code(status)
                .with_header(header("Content-Type", kind))
                .with_header(header("X-Frame-Options", "SAMEORIGIN"))
                .with_header(header("Content-Security-Policy", "frame-ancestors 'self'"))
                .with_header(header("X-Content-Type-Options", "nosniff"));
            // A browser that went away before the answer: nothing to do.
            let _ = request.respond(response);
        }
    }

    fn answer(&mut self, request: &mut tiny_http::Request) -> Reply {
        let url = request.url().to_string();
        let (route, query) = url.split_once('?').unwrap_or((&url, ""));
        let param = |key: &str| {
            query
                .split('&')
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                .map(|v| percent_encoding::percent_decode_str(v).decode_utf8_lossy().into_owned())
                .unwrap_or_default()
        };
        let path = param("path");
        match (request.method(), route) {
            (tiny_http::Method::Get, "/") => Reply(200, HTML, PAGE.to_string()),
            (tiny_http::Method::Get, "/api/view") => self.view(&path),
            (tiny_http::Method::Get, "/api/whatif") => match self.what_if(&path, &param("setting")) {
                Ok(v) => Reply::json(&v),
                Err(e) => Reply::error(400, &e),
            },
            (tiny_http::Method::Get, "/stepper") => self.stepper(&path),
            (tiny_http::Method::Get, "/api/source") => Reply::json(&serde_json::json!({
                "file": self.file.shown(),
                "text": self.walked.source,
                "generation": self.walked.generation,
                "save_refused": self.file.never_saved(),
            })),
            (tiny_http::Method::Post, "/api/apply" | "/api/save") => {
                let save = route == "/api/save";
                match edit::Edit::read(request) {
                    Ok(e) => self.edit(e, save),
                    Err((status, why)) => Reply::error(status, &why),
                }
            }
            (_, "/" | "/api/view" | "/api/whatif" | "/stepper" | "/api/source" | "/api/apply" | "/api/save") => {
                Reply::error(405, &format!("{} {route} is not served: see the page at /", request.method()))
            }
            _ => Reply::error(404, &format!("{route} is not served here: / is the page, /api/view?path=… a state")),
        }
    }

    fn view(&self, path: &str) -> Reply {
        match parse_path(path).and_then(|p| self.walked.by_hand.view(&p)) {
            Ok(mut v) => {
                self.with_risks(&mut v, path);
                v["generation"] = self.walked.generation.into();
                Reply::json(&v)
            }
            // With the walk's generation: a tab whose path leads nowhere in
            // a file another tab applied learns that it changed.
            Err(e) => {
                Reply(400, JSON, serde_json::json!({ "error": e, "generation": self.walked.generation }).to_string())
            }
        }
    }

    /// The path so far as `run --html` draws a run: the actors follow it,
    /// and the stepper shows every card, the wait-for graph and the
    /// sequence diagram at each event.
    fn stepper(&self, path: &str) -> Reply {
        let scenario = &self.walked.scenario;
        let title = format!("{}, by hand", scenario.name);
        let reproduce = "the path is in the page's URL";
        match parse_path(path)
            .and_then(|p| self.walked.by_hand.schedule(&p))
            .and_then(|s| crate::view::page::stepping_page(scenario, s.seed, Some(s), &title, reproduce))
        {
            Ok(page) => Reply(200, HTML, page),
            // Shown in the page's frame: a page, not a JSON object.
            Err(e) => Reply(
                400,
                HTML,
                format!(
                    "<!doctype html><meta charset=\"utf-8\"><title>No stepper</title><p>No stepper for this path: {}</p>",
                    crate::view::ink::escape(&e)
                ),
            ),
        }
    }

    /// An edit applied (and saved, if asked): the walk starts again from the
    /// new file's first state, or, if the text does not read cleanly,
    /// nothing changes and the problems are said as `check` says them.
    fn edit(&mut self, e: edit::Edit, save: bool) -> Reply {
        let (scenario, by_hand) = match edit::walkable(&self.file.shown(), &e.text, self.setup) {
            Ok(w) => w,
            Err(said) => {
                let what = if save { "not saved, and nothing changed" } else { "nothing changed" };
                return Reply(
                    400,
                    JSON,
                    serde_json::json!({ "error": format!("the text does not read: {what}"), "problems": said })
                        .to_string(),
                );
            }
        };
        if save {
            if let Err(refused) = self.file.save(&e.text, e.overwrite) {
                return Reply(
                    refused.status,
                    JSON,
                    serde_json::json!({ "error": refused.why, "changed_on_disk": refused.status == 409 }).to_string(),
                );
            }
        }
        let generation = self.walked.generation + 1;
        self.walked = Walked { scenario, source: e.text, by_hand: Arc::new(by_hand), generation };
        let mut k = self.known.lock().unwrap_or_else(|p| p.into_inner());
        *k = Known { generation, ..Known::default() };
        Reply::json(&serde_json::json!({ "generation": generation, "saved": save, "file": self.file.shown() }))
    }

    /// The path `path` taken in the file with `setting` made (`--compare`'s
    /// "what if"): where that world leads, and where it parts from this
    /// one, by step (a choice it cannot take) and by event (the first that
    /// differs).
    fn what_if(&self, path: &str, setting: &str) -> Result<serde_json::Value, String> {
        let Walked { scenario, source, by_hand, .. } = &self.walked;
        // Read as `run --compare` reads it: `sender_auth=false` is the defence.
        let (mut changed, _) = crate::scenario::whatif::scenario_with_words(&scenario.path, source, setting)?;
        changed.expects.clear();
        let budgets = self.setup.flags.with_file_faults(&changed, self.setup.without_file_faults);
        let other = ByHand::new(&changed, &changed.name, budgets);
        let steps = parse_path(path)?;
        let schedule = by_hand.schedule(&steps)?;
        let (followed, parted_at_step) = other.follow(&schedule.choices);
        let mut v = other.view(&followed)?;
        let here = by_hand.view(&steps)?;
        let (a, b) = (here["events"].as_array(), v["events"].as_array());
        let parted_at_event = match (a, b) {
            (Some(a), Some(b)) => {
                a.iter().zip(b).position(|(x, y)| x != y).or((a.len() != b.len()).then(|| a.len().min(b.len())))
            }
            _ => None,
        };
        v["whatif"] = serde_json::json!({
            "setting": setting,
            "parted_at_step": parted_at_step,
            "parted_at_event": parted_at_event,
        });
        Ok(v)
    }

    /// Adds to each choice of the view of `path` what the background search
    /// knows of it, or asks the search (once) and says "not yet known".
    fn with_risks(&self, v: &mut serde_json::Value, path: &str) {
        let mut k = self.known.lock().unwrap_or_else(|p| p.into_inner());
        let risks = k.risks.get(path).cloned();
        if risks.is_none() && k.asked.insert(path.to_string()) {
            let generation = self.walked.generation;
            let _ = self.ask.send(Asked { generation, path: path.to_string(), by_hand: self.walked.by_hand.clone() });
        }
        drop(k);
        let Some(choices) = v["choices"].as_array_mut() else { return };
        for (i, c) in choices.iter_mut().enumerate() {
            c["risk"] = match risks.as_ref().and_then(|r| r.get(i)) {
                None => serde_json::json!({ "known": false }),
                Some(r) => {
                    let (broken, walk) = match &r.broken {
                        Some((what, steps)) => {
                            let tail: Vec<String> = steps.iter().map(usize::to_string).collect();
                            let walk =
                                if path.is_empty() { tail.join(".") } else { format!("{path}.{}", tail.join(".")) };
                            (serde_json::json!({ "what": what, "steps": steps.len() }), serde_json::json!(walk))
                        }
                        None => (serde_json::Value::Null, serde_json::Value::Null),
                    };
                    let stopped_by = r.stopped_by.map(|b| match b {
                        Bound::States => "states",
                        Bound::Memory => "memory",
                    });
                    serde_json::json!({ "known": true, "broken": broken, "walk": walk, "complete": r.complete(),
                        "stopped_by": stopped_by })
                }
            };
        }
    }
}
