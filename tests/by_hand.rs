//! Exploring by hand (issue 43): `explore FILE --serve` walks the
//! explorer's choices one at a time, the path written in the URL; its
//! editor applies and saves the scenario's text.

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
    answer(s)
}

/// A POST as the page sends one, with `headers` (each `Name: value\r\n`)
/// in place of its own when given.
fn post(addr: &str, path: &str, body: &str, headers: Option<&str>) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let ours = format!("Host: {addr}\r\nOrigin: http://{addr}\r\nContent-Type: application/json\r\n");
    let headers = headers.map_or(ours, str::to_string);
    let n = body.len();
    write!(s, "POST {path} HTTP/1.1\r\n{headers}Content-Length: {n}\r\nConnection: close\r\n\r\n{body}").unwrap();
    answer(s)
}

fn answer(mut s: std::net::TcpStream) -> (u16, String) {
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
    // A path that is no walk: said in a page, as the page's frame shows it.
    let (code, page) = get(&addr, "/stepper?path=0.99");
    assert_eq!(code, 400);
    assert!(page.contains("<p>No stepper for this path: ") && !page.contains("{\"error\""), "{page}");
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
    // A defence by its bare name, as `run --compare` takes it and the
    // page's own hint writes it.
    let (code, body) = get(&addr, "/api/whatif?path=0&setting=sender_auth%3Dfalse");
    assert_eq!(code, 200, "{body}");
    let (code, body) = get(&addr, "/api/whatif?path=0&setting=nonsense");
    assert_eq!(code, 400);
    assert_eq!(body.matches("nonsense").count(), 1, "the setting named once: {body}");
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
    assert!(risks[0].complete());
    let v = h.view(&walk).unwrap();
    assert_eq!(status(&v, "current-incarnation"), "broken here", "{walk:?}");
    // One step short of it, it still holds.
    let before = h.view(&walk[..walk.len() - 1]).unwrap();
    assert_eq!(status(&before, "current-incarnation"), "holds");
    // With every defence on (22's timeouts break its deadlock), nothing breaks anywhere.
    let safe = peer_deadlock().risks(&[], 20_000).unwrap();
    assert!(safe.iter().all(|r| r.broken.is_none() && r.complete()), "{safe:?}");
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

/// `explore FILE --serve` with `flags`, and the address it serves.
fn serve(file: &Path, flags: &[&str]) -> (Serving, String) {
    serve_in(Path::new("."), &file.display().to_string(), flags)
}

/// `explore SCENARIO --serve` run in `dir` (a file, or a bundled scenario's
/// number), and the address it serves.
fn serve_in(dir: &Path, scenario: &str, flags: &[&str]) -> (Serving, String) {
    let mut child = Serving(
        std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["explore", scenario, "--serve"])
            .args(flags)
            .current_dir(dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap_or_else(|| panic!("{line}"));
    (child, url.trim_start_matches("http://").trim_end_matches('/').to_string())
}

/// A folder of a test's own, removed however the test ends.
struct Scratch(std::path::PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("handshake-by-hand-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

fn edit(text: &str) -> String {
    serde_json::json!({ "text": text }).to_string()
}

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// Point 5: "apply" reads the text as `check` does; a text that does not
/// read changes nothing and says every problem with its snippet and help;
/// one that reads starts again from its first state, and the file is
/// written only by "save", never over a change made on disk meanwhile
/// unless asked.
#[cfg(unix)]
#[test]
fn an_edit_is_applied_only_when_it_reads_and_saved_only_when_asked() {
    let dir = scratch("edit");
    let file = dir.join("deadlock.toml");
    let original =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/22-peer-deadlock.toml")).unwrap();
    std::fs::write(&file, &original).unwrap();
    let (_server, addr) = serve(&file, &[]);
    let source = json(&get(&addr, "/api/source").1);
    assert_eq!(source["text"], original.as_str());
    assert_eq!(source["generation"], 1);

    // Two mistakes in a file that is valid TOML: both said, as `check` says them.
    let bad = original.replacen("[[teammate]]", "[[teammate]]\nrole = \"x\"", 1);
    let (code, body) = post(&addr, "/api/apply", &edit(&bad), None);
    assert_eq!(code, 400, "{body}");
    let v = json(&body);
    assert!(v["error"].as_str().unwrap().contains("nothing changed"), "{v}");
    let problems = v["problems"].as_str().unwrap();
    assert!(
        problems.contains("unknown field `role`") && problems.contains("--> ") && problems.contains("= help:"),
        "{problems}"
    );
    assert_eq!(json(&get(&addr, "/api/view?path=").1)["generation"], 1, "the old state is kept");
    assert_eq!(json(&get(&addr, "/api/source").1)["text"], original.as_str());

    // A text that reads: walked from its first state, the file untouched.
    let renamed = original.replacen("name = \"peer-deadlock-broken-by-timeouts\"", "name = \"renamed\"", 1);
    assert_ne!(renamed, original);
    let (code, body) = post(&addr, "/api/apply", &edit(&renamed), None);
    assert_eq!(code, 200, "{body}");
    assert_eq!(json(&body)["generation"], 2);
    let v = json(&get(&addr, "/api/view?path=").1);
    assert_eq!((v["scenario"].as_str(), v["generation"].as_i64()), (Some("renamed"), Some(2)));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original, "apply writes nothing");

    // Save: the file becomes the text, written whole.
    let (code, body) = post(&addr, "/api/save", &edit(&renamed), None);
    assert_eq!(code, 200, "{body}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), renamed);
    // A bad text is not saved.
    assert_eq!(post(&addr, "/api/save", &edit(&bad), None).0, 400);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), renamed);
    // Another program changes the file: a save would lose that, so it is refused until asked.
    let theirs = format!("{renamed}\n# a change made in another editor\n");
    std::fs::write(&file, &theirs).unwrap();
    let (code, body) = post(&addr, "/api/save", &edit(&original), None);
    assert_eq!(code, 409, "{body}");
    assert_eq!(json(&body)["changed_on_disk"], true);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), theirs);
    let overwrite = serde_json::json!({ "text": original, "overwrite": true }).to_string();
    assert_eq!(post(&addr, "/api/save", &overwrite, None).0, 200);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    let left: Vec<_> = std::fs::read_dir(&*dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "nothing but the file is written there: {left:?}");
}

/// Security: a save never writes through a symbolic link; another site's
/// page, a form, or a request naming another host is refused.
#[cfg(unix)]
#[test]
fn the_editor_refuses_links_other_sites_and_forms() {
    let dir = scratch("links");
    let target = dir.join("real.toml");
    let original = "name = \"x\"\nabout = \"y\"\n[[teammate]]\nname = \"alice\"\n";
    std::fs::write(&target, original).unwrap();
    let link = dir.join("link.toml");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (_server, addr) = serve(&link, &[]);
    let changed = original.replace("\"x\"", "\"changed\"");
    let refused = json(&get(&addr, "/api/source").1)["save_refused"].as_str().unwrap_or_default().to_string();
    assert!(refused.contains("symbolic link"), "the page is told, to say so beside save: {refused}");
    let (code, body) = post(&addr, "/api/save", &edit(&changed), None);
    assert_eq!(code, 403, "{body}");
    assert!(body.contains("symbolic link"), "{body}");
    let overwrite = serde_json::json!({ "text": changed, "overwrite": true }).to_string();
    assert_eq!(post(&addr, "/api/save", &overwrite, None).0, 403, "not even when asked to overwrite");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), original, "the file the link points to is left alone");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());

    let from = |origin: &str, kind: &str| format!("Host: {addr}\r\nOrigin: {origin}\r\nContent-Type: {kind}\r\n");
    let other_site = from("http://evil.example", "application/json");
    assert_eq!(post(&addr, "/api/apply", &edit(&changed), Some(&other_site)).0, 403);
    let form = format!("Host: {addr}\r\nContent-Type: text/plain\r\n");
    assert_eq!(post(&addr, "/api/apply", &edit(&changed), Some(&form)).0, 415);
    let rebound = "Host: evil.example\r\nContent-Type: application/json\r\n";
    assert_eq!(post(&addr, "/api/apply", &edit(&changed), Some(rebound)).0, 403);
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    write!(s, "GET /api/source HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n").unwrap();
    assert_eq!(answer(s).0, 403, "a name pointed here by another site reads nothing");
    let port = addr.rsplit(':').next().unwrap();
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    write!(s, "GET /api/source HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n").unwrap();
    assert_eq!(answer(s).0, 200, "localhost is this machine");
    assert_eq!(post(&addr, "/api/apply", "{\"txt\": 1}", None).0, 400);
    assert_eq!(get(&addr, "/api/apply").0, 405);
    assert_eq!(json(&get(&addr, "/api/source").1)["generation"], 1, "nothing refused changed anything");
}

/// A second tab: a connection left half-sent does not stop the server
/// answering another, and what one tab applies the other sees (its views
/// carry the walk's generation, which the page watches).
#[cfg(unix)]
#[test]
fn a_second_tab_is_answered_and_sees_what_the_first_applied() {
    let dir = scratch("tabs");
    let file = dir.join("s.toml");
    let original = "name = \"first\"\nabout = \"y\"\n[[teammate]]\nname = \"alice\"\n";
    std::fs::write(&file, original).unwrap();
    let (_server, addr) = serve(&file, &[]);
    let mut slow = std::net::TcpStream::connect(&addr).unwrap();
    write!(slow, "GET /api/view?path= HTTP/1.1\r\nHost: {addr}\r\n").unwrap();
    assert_eq!(json(&get(&addr, "/api/view?path=").1)["scenario"], "first", "answered beside a half-sent request");
    let (code, _) = post(&addr, "/api/apply", &edit(&original.replace("first", "second")), None);
    assert_eq!(code, 200);
    write!(slow, "Connection: close\r\n\r\n").unwrap();
    let v = json(&answer(slow).1);
    assert_eq!((v["scenario"].as_str(), v["generation"].as_i64()), (Some("second"), Some(2)));
}

/// Performance: the background search stops where the process's memory
/// passes --max-memory (its risks then say so), and the server's
/// peak stays within it; without the bound the same search goes past it.
#[cfg(target_os = "linux")]
#[test]
fn the_background_search_keeps_within_max_memory() {
    let dir = scratch("memory");
    let file = dir.join("41-at-6.toml");
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/41-lossy-re-ask.toml")).unwrap();
    std::fs::write(&file, text.replace("count = 3", "count = 6")).unwrap();
    let peak = |pid: u32| -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let kb = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap().split_whitespace().nth(1).unwrap();
        kb.parse::<u64>().unwrap() * 1024
    };
    // The page asked for, then its risks, once the search is done: the
    // peak memory before it began and after, and what stopped it.
    let search = |flags: &[&str]| {
        let (server, addr) = serve(&file, flags);
        let before = peak(server.0.id());
        for _ in 0..600 {
            let v = json(&get(&addr, "/api/view?path=").1);
            if v["choices"][0]["risk"]["known"] == true {
                return (before, peak(server.0.id()), v["choices"][0]["risk"]["stopped_by"].clone());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the background search answered within 30 s");
    };
    let (base, free, unbounded_stop) = search(&["--drop", "any"]);
    assert_eq!(unbounded_stop, "states", "unbounded, only its share of states stops it");
    // The bound: 12 MiB above what this build holds before it is asked anything.
    let bound = (base >> 20) + 12;
    assert!(free > (bound + 8) << 20, "unbounded, the search holds more than the bound tested: {free}");
    let (_, bounded, stop) = search(&["--drop", "any", "--max-memory", &format!("{bound}MiB")]);
    assert!(bounded <= bound << 20, "peak {bounded} bytes, over --max-memory {bound}MiB");
    assert_eq!(stop, "memory", "the bound stopped it, and the page is told so");
}

/// A bundled scenario (`explore 22 --serve` from any folder) is served and
/// edited in place, but never saved: it is part of the program.
#[test]
fn a_bundled_scenario_is_served_but_never_saved() {
    let dir = scratch("bundled");
    let (_server, addr) = serve_in(&dir, "22", &[]);
    let source = json(&get(&addr, "/api/source").1);
    assert_eq!(source["file"], "bundled:22-peer-deadlock.toml");
    assert!(source["save_refused"].as_str().unwrap().contains("handshake new --from 22"), "{source}");
    let text = source["text"].as_str().unwrap().replace("peer-deadlock-broken-by-timeouts", "renamed");
    assert_eq!(post(&addr, "/api/apply", &edit(&text), None).0, 200, "applied in memory");
    let (code, body) = post(&addr, "/api/save", &edit(&text), None);
    assert_eq!(code, 403, "{body}");
    assert_eq!(std::fs::read_dir(&*dir).unwrap().count(), 0, "nothing written where it runs");
}

/// A flag the page would not use (a search bound, an output, JSON) is
/// refused with --serve, exit 2, instead of ignored while the page serves.
#[test]
fn flags_the_page_does_not_use_are_refused_with_serve() {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/22-peer-deadlock.toml");
    for flags in [
        &["--max-latency", "5ms"][..],
        &["--format", "json"],
        &["--html", "never-written.html"],
        &["--write", "never-written.toml"],
        &["--save-schedule", "never-written.txt"],
        &["--order", "depth"],
        &["--compare"],
        &["--max-states", "5"],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["explore", &scenario.display().to_string(), "--serve"])
            .args(flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("cannot be used with"), "{flags:?}: {said}");
        assert!(!said.contains("http://"), "{flags:?}: nothing is served");
    }
}

/// A learner's review: `--serve 0.0.0.0:0` served the page, saving
/// included, to the whole network without a word.
#[test]
fn serving_beyond_this_machine_is_warned_of() {
    let (mut child, served) = serve_in(Path::new("."), "22", &["0.0.0.0:0"]);
    assert!(served.starts_with("0.0.0.0:"), "{served}");
    let mut line = String::new();
    BufReader::new(child.0.stderr.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.starts_with("warning: --serve 0.0.0.0:0 listens beyond this machine"), "{line}");
    assert!(line.contains("give 127.0.0.1:PORT to keep it local"), "{line}");
}

/// A learner's review: after "crash alice for good" the page offered "alice
/// finishes a step of its work", which then did nothing but move the clock.
/// A timer from an ended life is offered as what it is.
#[test]
fn a_timer_from_before_a_crash_is_offered_as_doing_nothing() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/01-happy-shutdown.toml");
    let s = load_file(&path).unwrap();
    let h = ByHand::new(&s, &s.name, Budgets { crash: 1, ..Budgets::default() });
    let mut path = Vec::new();
    take(&h, &mut path, "crash alice for good");
    let v = h.view(&path).unwrap();
    assert_eq!(
        words(&v, "choices"),
        ["a timer alice set before it went down runs out: nothing happens (at 500ms)"],
        "{path:?}"
    );
}

/// A learner's review: once alice's plan was approved, the only choice left
/// was "alice's deadline timer fires", which logged nothing: the learner had
/// to take it before bob could move. It is offered as doing nothing.
#[test]
fn a_deadline_timer_with_nothing_pending_is_offered_as_doing_nothing() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/22-peer-deadlock.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let bob_late = text.replacen(
        "at = \"1s\"\ndo = \"submit_plan\"\nfrom = \"bob\"",
        "at = \"3m\"\ndo = \"submit_plan\"\nfrom = \"bob\"",
        1,
    );
    assert_ne!(bob_late, text, "22's second step as written");
    let s = handshake::scenario::load_str("22.toml", &bob_late).unwrap();
    let h = ByHand::new(&s, &s.name, Budgets::default());
    let mut path = Vec::new();
    take(&h, &mut path, "alice takes its next scripted step");
    take(&h, &mut path, "deliver plan_approval_request [alice-asks-bob]");
    let v = take(&h, &mut path, "deliver plan_approval_response [alice-asks-bob]");
    assert_eq!(
        words(&v, "choices"),
        ["alice's deadline timer fires with nothing pending: nothing happens (at 2m1s)"],
        "{path:?}"
    );
}

/// A learner's review: a crash taken by hand, whose restart is the
/// learner's to choose, was narrated "alice CRASHED (restart due at 0ms)",
/// a time nothing happens at. It says the restart may come from now on; a
/// timed restart keeps its time (tests/golden).
#[test]
fn a_crash_whose_restart_is_chosen_by_hand_names_no_time_for_it() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/01-happy-shutdown.toml");
    let s = load_file(&path).unwrap();
    let h = ByHand::new(&s, &s.name, Budgets { crash: 1, ..Budgets::default() });
    let mut path = Vec::new();
    let v = take(&h, &mut path, "crash alice (it may restart)");
    let events: Vec<&str> = v["events"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
    let crash = events.iter().find(|e| e.contains("CRASHED")).expect("the crash is logged");
    assert!(crash.ends_with("alice CRASHED (a restart may come from now on)"), "{events:?}");
    assert!(!events.iter().any(|e| e.contains("restart due")), "{events:?}");
}
