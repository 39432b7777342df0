//! Exploring by hand (issue 43, in progress): `explore FILE --serve` walks
//! the explorer's choices one at a time, the path written in the URL.

use handshake::explore::by_hand::{parse_path, ByHand};
use handshake::explore::Budgets;
use handshake::scenario::load_file;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

fn peer_deadlock() -> ByHand {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/22-peer-deadlock.toml");
    let s = load_file(&path).unwrap();
    ByHand::new(&s, &s.name, Budgets::default())
}

fn words(v: &Value, key: &str) -> Vec<String> {
    v[key].as_array().unwrap().iter().map(|c| c["words"].as_str().unwrap().to_string()).collect()
}

fn status(v: &Value, invariant: &str) -> String {
    let all = v["invariants"].as_array().unwrap();
    all.iter().find(|i| i["name"] == invariant).unwrap()["status"].as_str().unwrap().to_string()
}

/// Takes the first choice whose words start with `prefix` at each step.
fn take(h: &ByHand, path: &mut Vec<usize>, prefix: &str) -> Value {
    let v = h.view(path).unwrap();
    let i = words(&v, "choices").iter().position(|w| w.starts_with(prefix)).unwrap_or_else(|| {
        panic!("no choice starting {prefix:?} at {path:?}: {:?}", words(&v, "choices"));
    });
    path.push(i);
    h.view(path).unwrap()
}

#[test]
fn the_choices_name_their_messages_and_the_deadlock_forms_by_hand() {
    let h = peer_deadlock();
    let start = h.view(&[]).unwrap();
    assert!(start["path"].as_array().unwrap().is_empty());
    assert!(words(&start, "choices").iter().all(|w| w.contains("starts") || w.contains("alice") || w.contains("bob")));
    let mut path = Vec::new();
    // Each asks the other for a plan; each request is delivered as soon as it can be.
    let mut v = start;
    for _ in 0..40 {
        let delivered = words(&v, "path").iter().filter(|w| w.starts_with("deliver plan_approval_request")).count();
        if delivered == 2 {
            break;
        }
        let next = words(&v, "choices");
        let prefix = if next.iter().any(|w| w.starts_with("deliver plan_approval_request")) {
            "deliver plan_approval_request"
        } else {
            ""
        };
        v = take(&h, &mut path, prefix);
    }
    let taken = words(&v, "path");
    assert!(taken.iter().filter(|w| w.starts_with("deliver plan_approval_request")).count() == 2, "{taken:?}");
    assert!(
        taken.iter().any(|w| w.contains("[alice-asks-bob]")) && taken.iter().any(|w| w.contains("[bob-asks-alice]"))
    );
    // Both wait on each other: nothing is broken yet, and both requests are pending.
    assert_eq!(status(&v, "single-terminal"), "holds", "{v}");
    // Going back is a shorter path: the same state as before.
    let back = h.view(&path[..path.len() - 1]).unwrap();
    assert_eq!(back["path"].as_array().unwrap().len(), path.len() - 1);
    assert_eq!(h.view(&path).unwrap(), v, "the same path, the same state");
}

#[test]
fn a_path_that_leads_nowhere_says_where_and_why() {
    let h = peer_deadlock();
    let e = h.view(&[99]).unwrap_err();
    assert!(e.contains("step 1 takes choice 99") && e.contains("enabled"), "{e}");
    assert!(parse_path("1.two").is_err());
}

/// One GET to the server: status and body.
fn get(addr: &str, path: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

#[cfg(unix)]
#[test]
fn the_server_answers_the_page_the_state_and_404_and_stops_on_ctrl_c() {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/22-peer-deadlock.toml");
    let mut child = Serving(
        std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["explore", &scenario.display().to_string(), "--serve"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut out = BufReader::new(child.0.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap_or_else(|| panic!("{line}"));
    let addr = url.trim_start_matches("http://").trim_end_matches('/').to_string();
    assert!(addr.starts_with("127.0.0.1:"), "this machine only, unless named: {addr}");
    let (code, page) = get(&addr, "/");
    assert_eq!(code, 200);
    assert!(page.contains("<html") && page.contains("textContent"), "{page}");
    let (code, body) = get(&addr, "/api/view?path=");
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["scenario"], "peer-deadlock-broken-by-timeouts");
    assert_eq!(v["choices"][0]["risk"]["known"], false, "the checker has just been asked");
    let mut known = false;
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let v: Value = serde_json::from_str(&get(&addr, "/api/view?path=").1).unwrap();
        if v["choices"][0]["risk"]["known"] == true {
            assert_eq!(v["choices"][0]["risk"]["complete"], true, "{v}");
            known = true;
            break;
        }
    }
    assert!(known, "the background search answers within five seconds");
    let (code, body) = get(&addr, "/api/view?path=0.99");
    assert_eq!(code, 400, "{body}");
    let (code, page) = get(&addr, "/stepper?path=0.1.0.0");
    assert_eq!(code, 200);
    assert!(page.contains("Step through it") && page.contains("alice-asks-bob"), "the stepper of the path so far");
    assert!(!page.contains("is expired —"), "the file's expectations are not judged on a path cut short");
    let (code, body) = get(&addr, "/api/whatif?path=0&setting=strict_hierarchy%3Dtrue");
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["whatif"]["setting"], "strict_hierarchy=true");
    let events: Vec<&str> = v["events"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
    assert!(events.iter().any(|e| e.contains("REFUSED")), "the hierarchy refuses alice's plan to bob: {events:?}");
    let (code, body) = get(&addr, "/api/whatif?path=0&setting=no_such_key%3D1");
    assert_eq!(code, 400);
    assert!(body.contains("no_such_key"), "{body}");
    assert_eq!(get(&addr, "/etc/passwd").0, 404);
    assert_eq!(get(&addr, "/api/nothing").0, 404);
    // SAFETY: sending SIGINT to a child process this test started.
    unsafe {
        libc::kill(child.0.id() as libc::pid_t, libc::SIGINT);
    }
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(130), "Ctrl-C stops it, as interrupted");
}

/// Point 3: what the checker knows of each choice, and its shortest
/// schedule to a violation, which the page's "walk it" takes.
#[test]
fn the_checker_finds_the_shortest_schedule_through_a_choice_and_it_breaks_there() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/32-leftover-shutdown-kills-respawn.toml");
    let s = load_file(&path).unwrap();
    let h = ByHand::new(&s, &s.name, Budgets::default());
    let risks = h.risks(&[], 20_000).unwrap();
    let (what, walk) = risks[0].broken.clone().expect("the incarnation check is off: something breaks");
    assert_eq!(what, "current-incarnation");
    assert!(risks[0].complete);
    let v = h.view(&walk).unwrap();
    assert_eq!(status(&v, "current-incarnation"), "broken here", "{walk:?}");
    // One step short of it, it still holds.
    let before = h.view(&walk[..walk.len() - 1]).unwrap();
    assert_eq!(status(&before, "current-incarnation"), "holds");
    // With every defence on (22's timeouts break its deadlock), nothing breaks anywhere.
    let safe = peer_deadlock().risks(&[], 20_000).unwrap();
    assert!(safe.iter().all(|r| r.broken.is_none() && r.complete), "{safe:?}");
}

/// Point 4: the same path in the file with one setting changed, and where
/// the two part.
#[test]
fn what_if_takes_the_same_path_under_a_changed_file() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/32-leftover-shutdown-kills-respawn.toml");
    let source = std::fs::read_to_string(&path).unwrap();
    let s = load_file(&path).unwrap();
    let h = ByHand::new(&s, &s.name, Budgets::default());
    let walk = h.risks(&[], 20_000).unwrap()[0].broken.clone().unwrap().1;
    let schedule = h.schedule(&walk).unwrap();
    let setting = handshake::scenario::whatif::Setting::parse("defences.incarnation_check=true").unwrap();
    let on = handshake::scenario::whatif::scenario_with(&path.display().to_string(), &source, &setting).unwrap();
    let other = ByHand::new(&on, &on.name, Budgets::default());
    let (followed, parted) = other.follow(&schedule.choices);
    assert_eq!(parted, None, "every step can be taken with the check on");
    assert_eq!(followed.len(), walk.len());
    let v = other.view(&followed).unwrap();
    assert_eq!(status(&v, "current-incarnation"), "holds", "the check keeps it");
    assert_eq!(status(&h.view(&walk).unwrap(), "current-incarnation"), "broken here");
}

/// The server a test started, stopped however the test ends (a failed
/// assertion must not leave it serving).
struct Serving(std::process::Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
