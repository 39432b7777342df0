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

use crate::explore::by_hand::{parse_path, ByHand};
use crate::scenario::Scenario;
use std::time::Duration;

/// The page: one file, its text from the server's JSON set with
/// `textContent` only, so nothing a scenario holds can run as markup.
const PAGE: &str = include_str!("serve.html");

/// Serves `by_hand`, a walk of `scenario`, on `addr` until Ctrl-C; the
/// exit status.
pub fn serve(scenario: &Scenario, by_hand: &ByHand, addr: &str) -> i32 {
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
        let (status, kind, body) = answer(scenario, by_hand, request.method(), request.url());
        let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], kind.as_bytes()).expect("a valid header");
        let response = tiny_http::Response::from_string(body).with_status_code(status).with_header(header);
        // A browser that went away before the answer: nothing to do.
        let _ = request.respond(response);
    }
}

/// What the server says to `method url`: status, content type, body.
pub fn answer(
    scenario: &Scenario,
    by_hand: &ByHand,
    method: &tiny_http::Method,
    url: &str,
) -> (u16, &'static str, String) {
    const JSON: &str = "application/json; charset=utf-8";
    if *method != tiny_http::Method::Get {
        return (405, JSON, error("only GET is served"));
    }
    let (route, query) = url.split_once('?').unwrap_or((url, ""));
    let path = query.split('&').find_map(|kv| kv.strip_prefix("path=")).unwrap_or("");
    match route {
        "/" => (200, "text/html; charset=utf-8", PAGE.to_string()),
        "/api/view" => match parse_path(path).and_then(|p| by_hand.view(&p)) {
            Ok(v) => (200, JSON, v.to_string()),
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

fn error(text: &str) -> String {
    serde_json::json!({ "error": text }).to_string()
}
