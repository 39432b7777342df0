//! The stepping page in a real browser (issue 22, point 6): Chromium, headless,
//! runs the page's own script. A step is addressed by the page's `#event=N`
//! (the stepper keeps it up to date as a learner steps, so a step can be
//! linked to), so each load is one step; stepping by keys is driven under
//! Node in tests/view.rs.
//!
//! Needs Debian's `chromium` (or `CHROMIUM=/path/to/it`); `.ci/run` installs
//! it when missing. Without it (decided when the tests are built, by
//! build.rs) the tests are ignored, with the reason in cargo's summary.

mod common;
#[path = "common/devtools.rs"]
mod devtools;

use handshake::scenario::{load_file, run_scenario, RunOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    let named = std::env::var_os("CHROMIUM").map(PathBuf::from);
    let candidates = named.into_iter().chain(["chromium", "chromium-browser", "google-chrome"].map(PathBuf::from));
    candidates.into_iter().find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
}

fn headless(browser: &Path, args: &[&str], url: &str) -> String {
    // A profile a call: two tests at once must not share one (Chromium locks it).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let profile = std::env::temp_dir().join(format!("handshake-chromium-{}-{call}", std::process::id()));
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .unwrap_or_else(|e| panic!("{} must start: {e}", browser.display()));
    let _ = std::fs::remove_dir_all(&profile);
    assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// What the stepper shows, as text: its part of the DOM after the page's
/// scripts ran (from its heading to the picture's), tags and scripts gone.
fn shown(dom: &str) -> String {
    let start = dom.find("<h2>Step through it</h2>").expect("the page has a stepper");
    let end = start + dom[start..].find("<h2>The run</h2>").expect("and a picture after it");
    let mut part = dom[start..end].to_string();
    while let Some(a) = part.find("<script") {
        let b = a + part[a..].find("</script>").map_or(part.len() - a, |e| e + "</script>".len());
        part.replace_range(a..b, " ");
    }
    text_of(&part)
}

fn text_of(dom: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in dom.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&").split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
#[cfg_attr(
    not(has_chromium),
    ignore = "needs chromium, not found when the tests were built: apt-get install chromium, or set CHROMIUM (.ci/run installs it)"
)]
fn the_page_steps_to_22s_deadlock_and_back_in_chromium() {
    let browser = chromium().expect("chromium was found when the tests were built, and must start now");
    let file = common::bundled_files().into_iter().find(|f| f.ends_with("22-peer-deadlock.toml")).expect("bundled");
    let s = load_file(&file).expect("loads");
    let dir = std::env::temp_dir().join(format!("handshake-browser-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("22.html");
    let ran = Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["run", &file.to_string_lossy(), "--html"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    // The step after which both teammates have put the other's request aside.
    let o = run_scenario(&s, s.default_seed(), RunOptions { keep_outcome: true, ..RunOptions::default() })
        .outcome
        .take()
        .unwrap();
    let texts: Vec<String> = o.events.iter().map(|e| e.describe(&o.names)).collect();
    let both =
        1 + texts.iter().position(|t| t.contains("alice is blocked waiting; puts [bob-asks-alice] aside")).unwrap();
    let url = |n: usize| format!("file://{}#event={n}", page.display());

    let dom = headless(&browser, &["--dump-dom"], &url(both));
    // The picture marks the step's moment.
    assert!(dom.contains("<rect id=\"now-mark\""), "the picture has no mark at the current step");
    // The wait-for graph is drawn, both of its edges red: they are the cycle.
    assert_eq!(dom.matches("class=\"cycle-edge\"").count(), 2, "the cycle's two edges drawn");
    assert_eq!(dom.matches("class=\"wait-edge\"").count(), 0, "no edge outside the cycle");
    let at = shown(&dom);
    let where_ = format!("event {both} of {}", o.events.len());
    for want in [
        where_.as_str(),
        "alice is blocked waiting; puts [bob-asks-alice] aside",
        "set aside: plan_approval_request [alice-asks-bob] from alice",
        "set aside: plan_approval_request [bob-asks-alice] from bob",
        "alice waits on bob for [alice-asks-bob] · bob waits on alice for [bob-asks-alice]",
        "⟳ deadlock: bob → alice → bob",
    ] {
        assert!(at.contains(want), "step {both} does not show {want:?}:\n{at}");
    }
    // Back before alice's turn (its first event, the delivery of bob's
    // request, already shows the state the turn left): only bob has set a
    // request aside.
    let turn = texts.iter().position(|t| t.contains("bob ⇒ alice  plan_approval_request [bob-asks-alice]")).unwrap();
    let before = turn; // the event before the turn's first, counted from 1
    let back = shown(&headless(&browser, &["--dump-dom"], &url(before)));
    assert!(back.contains(&format!("event {before} of")), "{back}");
    assert!(back.contains("bob is blocked waiting; puts [alice-asks-bob] aside"), "{back}");
    assert!(back.contains("set aside: plan_approval_request [alice-asks-bob] from alice"), "{back}");
    assert!(!back.contains("set aside: plan_approval_request [bob-asks-alice] from bob"), "{back}");

    // A screenshot of the step, not blank: a page with text, cards, colour.
    let png = dir.join("22.png");
    headless(&browser, &[&format!("--screenshot={}", png.display()), "--window-size=1300,1100"], &url(both));
    let pixmap = resvg::tiny_skia::Pixmap::load_png(&png).expect("a PNG");
    let inked = pixmap.pixels().iter().filter(|p| (p.red(), p.green(), p.blue()) != (255, 255, 255)).count();
    let share = inked as f64 / pixmap.pixels().len() as f64;
    assert!(share > 0.03, "the screenshot is nearly blank: {:.2} % inked", share * 100.0);
    if let Some(keep) = std::env::var_os("VIEW_PNG_DIR") {
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(&png, Path::new(&keep).join("22-step.png")).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 22, point 3: `--compare` steps two runs together. 13 with sender
/// authentication on and off: at the first event where they part, the left
/// alice still waits on her plan and the right one works, its gate opened
/// by the forgery; the stepper names the event where they parted.
#[test]
#[cfg_attr(
    not(has_chromium),
    ignore = "needs chromium, not found when the tests were built: apt-get install chromium, or set CHROMIUM (.ci/run installs it)"
)]
fn the_what_if_page_steps_both_runs_together_in_chromium() {
    let browser = chromium().expect("chromium was found when the tests were built, and must start now");
    let file = common::bundled_files()
        .into_iter()
        .find(|f| f.ends_with("13-forged-lead-approval-ignored.toml"))
        .expect("bundled");
    let dir = std::env::temp_dir().join(format!("handshake-browser-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("13.html");
    let ran = Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["run", &file.to_string_lossy(), "--compare", "sender_auth=false", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    let said = String::from_utf8_lossy(&ran.stdout);
    let parted: usize = said
        .split("the two runs part at event ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the report names where the runs part:\n{said}"));
    let dom = headless(&browser, &["--dump-dom"], &format!("file://{}#event={}", page.display(), parted + 1));
    let start = dom.find("<h2>Step through both</h2>").expect("the page steps both runs");
    let end = start + dom[start..].find("<h2>The runs</h2>").expect("and draws both");
    let mut part = dom[start..end].to_string();
    while let Some(a) = part.find("<script") {
        let b = a + part[a..].find("</script>").map_or(part.len() - a, |e| e + "</script>".len());
        part.replace_range(a..b, " ");
    }
    let at = text_of(&part);
    assert!(at.contains(&format!("≠ the two runs parted at event {parted}")), "{at}");
    let (left, right) = at.split_at(
        at.find("lead working leading the team")
            .and_then(|i| at[i + 10..].find("lead working").map(|j| i + 10 + j))
            .expect("two panes"),
    );
    assert!(left.contains("alice waiting_approval") && left.contains("plan gate: pending"), "as written: {left}");
    assert!(right.contains("alice working") && right.contains("plan gate: approved"), "with sender_auth off: {right}");
    for p in ["a-", "b-"] {
        assert!(dom.contains(&format!("<rect id=\"{p}now-mark\"")), "{p}: each picture marks the step");
        assert!(dom.contains(&format!("id=\"{p}ev{}\"", parted - 1)), "{p}: each run's events listed");
    }
    let marked =
        dom.split("<tr class=\"").skip(1).filter(|r| r.split('"').next().is_some_and(|c| c.contains("parted"))).count();
    assert_eq!(marked, 2, "the event where they part is marked in both lists");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 43, point 6: `explore --serve` in a real browser. 22's deadlock is
/// formed by following the choices' links, two steps are taken back, the
/// URL reloads the same state, and `strict_hierarchy` switched on in place
/// shows the refusal.
#[test]
#[cfg_attr(
    not(has_chromium),
    ignore = "needs chromium, not found when the tests were built: apt-get install chromium, or set CHROMIUM (.ci/run installs it)"
)]
fn exploring_22_by_hand_in_chromium() {
    use std::io::BufRead;
    let browser = chromium().expect("chromium was found when the tests were built, and must start now");
    let file = common::bundled_files().into_iter().find(|f| f.ends_with("22-peer-deadlock.toml")).expect("bundled");
    // The path to the deadlock: both ask first, then each request is delivered.
    let s = load_file(&file).expect("loads");
    let h = handshake::explore::by_hand::ByHand::new(&s, &s.name, handshake::explore::Budgets::default());
    let mut path: Vec<usize> = Vec::new();
    for _ in 0..40 {
        let v = h.view(&path).unwrap();
        let words = |k: &str| -> Vec<String> {
            v[k].as_array().unwrap().iter().map(|c| c["words"].as_str().unwrap().to_string()).collect()
        };
        if words("path").iter().filter(|w| w.starts_with("deliver plan_approval_request")).count() == 2 {
            break;
        }
        let next = words("choices");
        let pick = next
            .iter()
            .position(|w| w.contains("takes its next scripted step"))
            .or_else(|| next.iter().position(|w| w.starts_with("deliver plan_approval_request")))
            .unwrap_or(0);
        path.push(pick);
    }
    let (mut server, mut said, base) = serve(&file);
    let mut line = String::new();
    let joined = |p: &[usize]| p.iter().map(usize::to_string).collect::<Vec<_>>().join(".");
    let page = |p: &[usize], extra: &str| {
        let dom = headless(
            &browser,
            &["--dump-dom", "--virtual-time-budget=5000"],
            &format!("{base}/#p={}{extra}", joined(p)),
        );
        (dom.matches("class=\"step\"").count(), text_of(&dom))
    };

    let (_, there) = page(&path, "");
    assert!(there.contains("deliver plan_approval_request [alice-asks-bob] from alice to bob"), "{there}");
    assert!(there.contains("deliver plan_approval_request [bob-asks-alice] from bob to alice"), "{there}");
    assert!(there.contains("DEADLOCK") && there.contains("each waits for the next"), "the cycle, in the log: {there}");
    assert!(there.contains("single-terminal: holds"), "both requests still pending: {there}");
    let (back, _) = page(&path[..path.len() - 2], "");
    let (steps_there, _) = page(&path, "");
    assert_eq!(steps_there - back, 2, "two steps back: two fewer steps in the path");
    let (_, start) = page(&[], "");
    assert!(!start.contains("DEADLOCK"), "before anyone asks there is no cycle: {start}");
    let (_, again) = page(&path, "");
    assert_eq!(again, there, "the URL reloads the same state");
    let (_, what_if) = page(&path, "&w=strict_hierarchy%3Dtrue");
    assert!(what_if.contains("with strict_hierarchy=true:") && what_if.contains("REFUSED"), "{what_if}");

    let shot = std::env::temp_dir().join(format!("handshake-by-hand-{}.png", std::process::id()));
    headless(
        &browser,
        &[&format!("--screenshot={}", shot.display()), "--window-size=1400,900", "--virtual-time-budget=5000"],
        &format!("{base}/#p={}", joined(&path)),
    );
    let bytes = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(bytes > 30_000, "the screenshot is not blank ({bytes} bytes)");
    let _ = std::fs::remove_file(&shot);
    // SAFETY: sending SIGINT to a child process this test started.
    unsafe {
        libc::kill(server.0.id() as libc::pid_t, libc::SIGINT);
    }
    assert_eq!(server.0.wait().unwrap().code(), Some(130));
    line.clear();
    said.read_line(&mut line).unwrap();
    assert!(line.contains("stopped"), "{line}");
}

/// `explore FILE --serve` started, with what it says (kept open to the
/// end: it says when it stops) and the address it serves.
fn serve(file: &Path) -> (Serving, std::io::BufReader<std::process::ChildStdout>, String) {
    use std::io::BufRead;
    let mut server = Serving(
        Command::new(env!("CARGO_BIN_EXE_handshake"))
            .args(["explore", &file.to_string_lossy(), "--serve"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut said = std::io::BufReader::new(server.0.stdout.take().unwrap());
    let mut line = String::new();
    said.read_line(&mut line).unwrap();
    let base = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap().trim_end_matches('/').to_string();
    (server, said, base)
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

/// Issue 43, security: a scenario's text is shown as text, never run as
/// markup, on the served page (its name and its messages).
#[test]
#[cfg_attr(
    not(has_chromium),
    ignore = "needs chromium, not found when the tests were built: apt-get install chromium, or set CHROMIUM (.ci/run installs it)"
)]
fn a_hostile_scenario_shows_as_text_on_the_served_page() {
    let browser = chromium().expect("chromium was found when the tests were built, and must start now");
    let dir = std::env::temp_dir().join(format!("handshake-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("hostile.toml");
    let hostile = "</script><img src=x onerror=alert(1)>";
    let text = format!(
        "name = \"{}\"\nabout = \"x\"\n[[teammate]]\nname = \"alice\"\n[[step]]\nat = \"1s\"\ndo = \"message\"\nto = \"alice\"\ntext = \"{}\"\n",
        hostile.replace('"', "\\\""),
        hostile.replace('"', "\\\"")
    );
    std::fs::write(&file, text).unwrap();
    let (_server, _said, base) = serve(&file);
    let dom = headless(&browser, &["--dump-dom", "--virtual-time-budget=5000"], &format!("{base}/#p=0.0"));
    assert!(!dom.contains("<img src=\"x\""), "no element was made of the scenario's text");
    assert!(dom.contains("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"), "shown as text: {dom}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A step's words that open an HTML comment and a script (`<!--<script>`)
/// leave the page's data block open to the end, and the stepper came up
/// empty: every `<` in the data is now escaped, and the page steps.
#[test]
#[cfg_attr(
    not(has_chromium),
    ignore = "needs chromium, not found when the tests were built: apt-get install chromium, or set CHROMIUM (.ci/run installs it)"
)]
fn a_step_whose_words_open_a_comment_and_a_script_still_steps_in_chromium() {
    let browser = chromium().expect("chromium was found when the tests were built, and must start now");
    let dir = std::env::temp_dir().join(format!("handshake-comment-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("comment.toml");
    let text = "name = \"comment\"\nabout = \"x\"\n[[teammate]]\nname = \"alice\"\n[[step]]\nat = \"1s\"\n\
                do = \"shutdown\"\nto = \"alice\"\nreason = \"<!--<script>\"\n";
    std::fs::write(&file, text).unwrap();
    let page = dir.join("comment.html");
    let ran =
        Command::new(env!("CARGO_BIN_EXE_handshake")).arg("run").arg(&file).arg("--html").arg(&page).output().unwrap();
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<!--<script>"), "the words reach the page's data escaped");
    let dom = headless(&browser, &["--dump-dom"], &format!("file://{}#event=3", page.display()));
    let at = shown(&dom);
    assert!(at.contains("event 3 of"), "the stepper shows its step:\n{at}");
    assert!(at.contains("<!--<script>"), "and the words as text:\n{at}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 43, points 2, 5 and 6, clicked as a person clicks: 22's deadlock
/// formed by clicking its choices; the cycle drawn and `single-terminal`
/// still holding; two steps back by clicking the path; a reload lands on
/// the same state; `strict_hierarchy` switched on in place shows the
/// refusal. A second tab edits the scenario: a mistake is shown with its
/// snippet and changes nothing, the fixed text is applied and saved, and
/// the first tab sees the change. Screenshots of both tabs.
#[test]
#[cfg_attr(
    not(has_chromium),
    ignore = "needs chromium, not found when the tests were built: apt-get install chromium, or set CHROMIUM (.ci/run installs it)"
)]
fn clicking_through_22_by_hand_and_editing_it_in_a_second_tab_in_chromium() {
    let chromium = chromium().expect("chromium was found when the tests were built, and must start now");
    let dir = std::env::temp_dir().join(format!("handshake-clicks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Removed however the test ends, unless asked to keep the screenshots.
    let _cleanup = (std::env::var_os("HANDSHAKE_KEEP_SHOTS").is_none()).then(|| RemoveOnDrop(dir.clone()));
    let bundled = common::bundled_files().into_iter().find(|f| f.ends_with("22-peer-deadlock.toml")).expect("bundled");
    let file = dir.join("22.toml");
    let original = std::fs::read_to_string(&bundled).unwrap();
    std::fs::write(&file, &original).unwrap();
    let (_server, _said, base) = serve(&file);
    let mut b = devtools::Browser::launch(&chromium);
    let a = b.open(&format!("{base}/"), (1400, 1800));
    b.wait(&a, "document.querySelectorAll('button.choice').length > 0", "shows the first choices");
    let steps =
        |b: &mut devtools::Browser, t: &devtools::Tab| b.eval(t, "document.querySelectorAll('#path li').length");
    let text = |b: &mut devtools::Browser, t: &devtools::Tab, id: &str| {
        b.eval(t, &format!("document.getElementById('{id}').innerText")).as_str().unwrap_or_default().to_string()
    };

    // Both teammates take their scripted step (each asks the other), then
    // each request is delivered: clicked one at a time.
    const CLICK: &str = "(() => { const bs = [...document.querySelectorAll('button.choice')]; \
        const b = bs.find(b => b.textContent.includes('takes its next scripted step')) \
        || bs.find(b => b.textContent.startsWith('deliver plan_approval_request')); \
        if (!b) return null; b.click(); return b.textContent; })()";
    let mut clicked = Vec::new();
    while clicked.iter().filter(|w: &&String| w.starts_with("deliver plan_approval_request")).count() < 2 {
        assert!(clicked.len() < 20, "the deadlock forms within 20 clicks: {clicked:?}");
        let n = steps(&mut b, &a).as_u64().unwrap();
        let words = b.eval(&a, CLICK);
        clicked.push(words.as_str().unwrap_or_else(|| panic!("nothing to click after {clicked:?}")).to_string());
        b.wait(&a, &format!("document.querySelectorAll('#path li').length == {}", n + 1), "takes the step clicked");
    }
    let formed = steps(&mut b, &a).as_u64().unwrap();
    assert!(text(&mut b, &a, "events").contains("DEADLOCK"), "the cycle is in the log");
    assert!(text(&mut b, &a, "invariants").contains("single-terminal: holds"), "both requests still pending");
    // The stepper below draws the path: at its last event, the cycle's two edges.
    b.wait(
        &a,
        "(() => { const d = document.getElementById('stepper').contentDocument; \
         return d && d.querySelectorAll('.cycle-edge').length == 2; })()",
        "draws the cycle in the stepper",
    );
    let shot_deadlock = dir.join("deadlock.png");
    assert!(b.screenshot(&a, &shot_deadlock) > 30_000, "the deadlock's screenshot is not blank");
    // The frame may be loading its page again (each step reloads it): the
    // edge is looked up, and scrolled to, in the page it then holds.
    b.wait(
        &a,
        "(() => { const d = document.getElementById('stepper').contentDocument; \
         const e = d && d.querySelector('.cycle-edge'); if (!e) return false; e.scrollIntoView(); return true; })()",
        "scrolls to the cycle in the stepper",
    );
    let shot_cycle = dir.join("cycle.png");
    assert!(b.screenshot(&a, &shot_cycle) > 30_000, "the cycle's screenshot is not blank");
    b.eval(&a, "window.scrollTo(0, 0)");

    // Two steps back, by clicking the path's entry for the step two before the end.
    b.eval(&a, &format!("document.querySelectorAll('#path li a')[{}].click()", formed - 2));
    b.wait(&a, &format!("document.querySelectorAll('#path li').length == {}", formed - 2), "goes back two steps");
    let back = text(&mut b, &a, "path");
    let url = b.eval(&a, "location.href");
    // A mark on this document, which the reloaded one does not have.
    b.eval(&a, "window.beforeReload = true; setTimeout(() => location.reload(), 0)");
    b.wait(&a, "!window.beforeReload && document.readyState === 'complete'", "reloads");
    b.wait(&a, "document.querySelectorAll('button.choice').length > 0", "shows the state again after a reload");
    b.wait(&a, &format!("document.querySelectorAll('#path li').length == {}", formed - 2), "reloads the same path");
    assert_eq!((b.eval(&a, "location.href"), text(&mut b, &a, "path")), (url, back), "the URL holds the state");
    // What if the hierarchy were strict: typed in and submitted.
    b.eval(
        &a,
        "document.getElementById('whatif').value = 'strict_hierarchy=true'; \
         document.querySelector('#whatif-form button').click()",
    );
    b.wait(&a, "document.getElementById('whatif-out').innerText.includes('REFUSED')", "shows the refusal");
    let shot_what_if = dir.join("what-if.png");
    assert!(b.screenshot(&a, &shot_what_if) > 30_000, "the what-if's screenshot is not blank");

    // A second tab, on the same server: a mistake, then the fix, then a save.
    let second = b.open(&format!("{base}/"), (1400, 1400));
    b.wait(&second, "document.getElementById('editor').value.includes('[[teammate]]')", "shows the file's text");
    b.wait(&second, "document.querySelectorAll('button.choice').length > 0", "shows the first state");
    let type_in = |b: &mut devtools::Browser, t: &devtools::Tab, js_replace: &str| {
        b.eval(
            t,
            &format!(
                "{{ const e = document.getElementById('editor'); e.value = e.value{js_replace}; \
                 e.dispatchEvent(new Event('input')); }}"
            ),
        );
    };
    type_in(&mut b, &second, ".replace('[[teammate]]', '[[teammate]]\\nrole = \"x\"')");
    b.eval(&second, "document.getElementById('apply').click()");
    b.wait(&second, "document.getElementById('problems').innerText.includes('unknown field')", "says the mistake");
    let problems = text(&mut b, &second, "problems");
    assert!(
        problems.contains("nothing changed") && problems.contains("--> ") && problems.contains("help:"),
        "{problems}"
    );
    assert_eq!(text(&mut b, &second, "title"), "peer-deadlock-broken-by-timeouts", "the old state is kept");
    let shot_b = dir.join("editor.png");
    assert!(b.screenshot(&second, &shot_b) > 30_000, "the second tab's screenshot is not blank");
    type_in(
        &mut b,
        &second,
        ".replace('\\nrole = \"x\"', '').replace('name = \"peer-deadlock-broken-by-timeouts\"', 'name = \"edited-by-hand\"')",
    );
    b.eval(&second, "document.getElementById('apply').click()");
    b.wait(&second, "document.getElementById('title').innerText == 'edited-by-hand'", "walks the edited file");
    assert_eq!(steps(&mut b, &second), 0, "from its first state");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original, "apply writes nothing");
    b.eval(&second, "document.getElementById('save').click()");
    b.wait(&second, "document.getElementById('edit-state').innerText.includes('saved to')", "saves");
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains("name = \"edited-by-hand\"") && !saved.contains("role ="), "{saved}");

    // The first tab, on its next step, sees the scenario changed under it.
    b.eval(&a, "document.getElementById('restart').click()");
    b.wait(&a, "document.getElementById('title').innerText == 'edited-by-hand'", "sees the other tab's change");
    assert!(b.eval(&a, "document.getElementById('editor').value").as_str().unwrap().contains("edited-by-hand"));
    assert!(text(&mut b, &a, "edit-state").contains("changed"), "and says so");
    if std::env::var_os("HANDSHAKE_KEEP_SHOTS").is_some() {
        eprintln!("screenshots kept in {}", dir.display());
    }
}

/// A folder removed when the test ends, passed or failed.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
