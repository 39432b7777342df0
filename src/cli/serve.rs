//! `explore FILE --serve [ADDR]`: a page on which a person takes the
//! explorer's choices one by one (`explore::by_hand`), served on this
//! machine only unless another address is named.
//!
//! tiny_http: one thread, blocking, no async runtime of its own. The page
//! is one person's, so one request at a time is plenty, and its few
//! dependencies keep the build light (axum would bring hyper and a second
//! runtime beside actix's).
//!
//! The server reads nothing but the scenario it was given (already read)
//! and writes nothing. `/` is the page, `/api/view?path=0.2.1` where a path
//! leads; anything else is 404.

use crate::explore::by_hand::{parse_path, ByHand, Risk};
use crate::scenario::Scenario;
use std::sync::Mutex;
use std::time::Duration;

/// The page: one file, its text from the server's JSON set with
/// `textContent` only, so nothing a scenario holds can run as markup.
const PAGE: &str = include_str!("serve.html");

/// States the background search looks at from each state a page shows,
/// over all its choices: what bounds its time and memory.
const RISK_BUDGET: usize = 20_000;

/// What the background search has found, by path (as the URL writes it).
#[derive(Default)]
struct Known {
    risks: std::collections::HashMap<String, Vec<Risk>>,
    asked: std::collections::HashSet<String>,
}

/// At most this many states' findings are kept; then the oldest go.
const MAX_KNOWN: usize = 512;

/// Serves `by_hand`, a walk of `scenario`, on `addr` until Ctrl-C; the
/// exit status.
/// `source`: the file's text, as read when the command began (a "what if"
/// changes it in memory; the file is never read again).
pub fn serve(scenario: &Scenario, source: &str, by_hand: &ByHand, addr: &str) -> i32 {
    let server = match tiny_http::Server::http(addr) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: --serve {addr}: cannot listen there: {e}; nothing was served");
            return super::EXIT_BAD_INPUT;
        }
    };
    let shown = server.server_addr().to_ip().map_or_else(|| addr.to_string(), |a| a.to_string());
    println!("exploring by hand at http://{shown}/ (Ctrl-C to stop)");
    crate::interrupt::install();
    let known = Mutex::new(Known::default());
    let (ask, asked) = std::sync::mpsc::channel::<String>();
    std::thread::scope(|scope| {
        // The checker: searches from each state a page asks about, the
        // latest first, while the server answers clicks.
        scope.spawn(|| search_in_the_background(by_hand, &known, asked));
        let code = answer_until_stopped(&server, (scenario, source), by_hand, &known, &ask);
        drop(ask);
        code
    })
}

fn search_in_the_background(by_hand: &ByHand, known: &Mutex<Known>, asked: std::sync::mpsc::Receiver<String>) {
    while let Ok(mut path) = asked.recv() {
        // Only the latest asked: a page moved on from the others.
        while let Ok(later) = asked.try_recv() {
            path = later;
        }
        let Ok(steps) = parse_path(&path) else { continue };
        let Ok(risks) = by_hand.risks(&steps, RISK_BUDGET) else { continue };
        let mut k = known.lock().unwrap_or_else(|p| p.into_inner());
        if k.risks.len() >= MAX_KNOWN {
            k.risks.clear();
            k.asked.clear();
        }
        k.risks.insert(path, risks);
    }
}

fn answer_until_stopped(
    server: &tiny_http::Server,
    file: (&Scenario, &str),
    by_hand: &ByHand,
    known: &Mutex<Known>,
    ask: &std::sync::mpsc::Sender<String>,
) -> i32 {
    loop {
        if crate::interrupt::requested() {
            println!("stopped: the page is no longer served");
            return super::EXIT_INTERRUPTED;
        }
        let request = match server.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                eprintln!("error: the server stopped: {e}");
                return super::EXIT_FAILED;
            }
        };
        let (status, kind, body) = answer(file, by_hand, request.method(), request.url(), known, ask);
        let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], kind.as_bytes()).expect("a valid header");
        let response = tiny_http::Response::from_string(body).with_status_code(status).with_header(header);
        // A browser that went away before the answer: nothing to do.
        let _ = request.respond(response);
    }
}

/// What the server says to `method url`: status, content type, body.
fn answer(
    (scenario, source): (&Scenario, &str),
    by_hand: &ByHand,
    method: &tiny_http::Method,
    url: &str,
    known: &Mutex<Known>,
    ask: &std::sync::mpsc::Sender<String>,
) -> (u16, &'static str, String) {
    const JSON: &str = "application/json; charset=utf-8";
    if *method != tiny_http::Method::Get {
        return (405, JSON, error("only GET is served"));
    }
    let (route, query) = url.split_once('?').unwrap_or((url, ""));
    let path = query.split('&').find_map(|kv| kv.strip_prefix("path=")).unwrap_or("");
    match route {
        "/" => (200, "text/html; charset=utf-8", PAGE.to_string()),
        "/api/whatif" => {
            let setting = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("setting="))
                .map(|v| percent_encoding::percent_decode_str(v).decode_utf8_lossy().into_owned())
                .unwrap_or_default();
            match what_if((scenario, source), by_hand, path, &setting) {
                Ok(v) => (200, JSON, v.to_string()),
                Err(e) => (400, JSON, error(&e)),
            }
        }
        "/api/view" => match parse_path(path).and_then(|p| by_hand.view(&p)) {
            Ok(mut v) => {
                with_risks(&mut v, path, known, ask);
                (200, JSON, v.to_string())
            }
            Err(e) => (400, JSON, error(&e)),
        },
        // The path so far as `run --html` draws a run: the actors follow
        // it, and the stepper shows every card, the wait-for graph and the
        // sequence diagram at each event.
        "/stepper" => {
            let title = format!("{}, by hand", scenario.name);
            let reproduce = "the path is in the page's URL";
            match parse_path(path)
                .and_then(|p| by_hand.schedule(&p))
                .and_then(|s| crate::view::page::stepping_page(scenario, s.seed, Some(s), &title, reproduce))
            {
                Ok(page) => (200, "text/html; charset=utf-8", page),
                Err(e) => (400, JSON, error(&e)),
            }
        }
        _ => (404, JSON, error(&format!("{route} is not served here: / is the page, /api/view?path=… the state"))),
    }
}

/// The path `path` taken in the file with `setting` made (`--compare`'s
/// "what if"): where that world leads, and where it parts from this one,
/// by step (a choice it cannot take) and by event (the first that differs).
fn what_if(
    (scenario, source): (&Scenario, &str),
    by_hand: &ByHand,
    path: &str,
    setting: &str,
) -> Result<serde_json::Value, String> {
    let parsed = crate::scenario::whatif::Setting::parse(setting).map_err(|e| format!("{setting:?}: {e}"))?;
    let mut changed = crate::scenario::whatif::scenario_with(&scenario.path, source, &parsed)?;
    changed.expects.clear();
    let other = ByHand::new(&changed, &changed.name, by_hand.budgets());
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
fn with_risks(v: &mut serde_json::Value, path: &str, known: &Mutex<Known>, ask: &std::sync::mpsc::Sender<String>) {
    let mut k = known.lock().unwrap_or_else(|p| p.into_inner());
    let risks = k.risks.get(path).cloned();
    if risks.is_none() && k.asked.insert(path.to_string()) {
        let _ = ask.send(path.to_string());
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
                        let walk = if path.is_empty() { tail.join(".") } else { format!("{path}.{}", tail.join(".")) };
                        (serde_json::json!({ "what": what, "steps": steps.len() }), serde_json::json!(walk))
                    }
                    None => (serde_json::Value::Null, serde_json::Value::Null),
                };
                serde_json::json!({ "known": true, "broken": broken, "walk": walk, "complete": r.complete })
            }
        };
    }
}

fn error(text: &str) -> String {
    serde_json::json!({ "error": text }).to_string()
}
