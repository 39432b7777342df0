//! Pictures of a run: golden SVG and Mermaid files for every bundled
//! scenario, every SVG rendered by a real SVG library, and what the pictures
//! must show (lost messages, forgeries, request bars, compressed idle time).
//!
//! After an intentional change to the pictures, rewrite the golden files with
//!
//!     UPDATE_GOLDEN=1 cargo test --test view
//!
//! and review the diff. The same command refreshes the pictures docs/learn.md
//! shows (docs/pictures/). `VIEW_PNG_DIR=/some/dir` also writes each SVG as PNG there.

mod common;

use handshake::scenario::{load_file, run_scenario, RunOptions};
use handshake::team::Outcome;
use handshake::view::model::{self, BarEnd, Fate, Gap};
use handshake::view::{mermaid, svg, ViewOptions};
use resvg::{tiny_skia, usvg};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Each bundled scenario with its name, run with its own seed.
fn bundled_runs() -> Vec<(String, String, Outcome)> {
    let mut out = Vec::new();
    for f in common::bundled_files() {
        let s = load_file(&f).unwrap_or_else(|e| panic!("{} must load: {e:?}", f.display()));
        let mut r = run_scenario(&s, s.default_seed(), RunOptions { keep_outcome: true, ..RunOptions::default() });
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        out.push((stem, s.name.clone(), r.outcome.take().expect("kept")));
    }
    out
}

fn bundled(stem_prefix: &str) -> (String, Outcome) {
    let (_, name, o) = bundled_runs().into_iter().find(|(stem, _, _)| stem.starts_with(stem_prefix)).expect("bundled");
    (name, o)
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("golden")
}

/// The pictures docs/learn.md shows, one per stop: kept in docs/pictures/ by
/// the same command as the golden files, and checked the same way.
const LEARN: &[&str] = &[
    "01-happy-shutdown",
    "02-shutdown-rejected-then-approved",
    "03-stalled-teammate-killed",
    "06-plan-rejected-then-revised",
    "08-plan-timeout-approve-danger",
    "14-sender-auth-off",
    "17-late-reply-ignored",
    "19-crash-and-restart",
    "22-peer-deadlock",
    "26-peer-deadlock-without-timeouts",
    "27-three-way-deadlock",
    "30-respawn-answers-old-request",
];

fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join("pictures")
}

#[test]
fn every_picture_learn_md_shows_is_up_to_date_and_linked() {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        // The golden test is writing them now; this checks them on the next run.
        return;
    }
    let learn = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/learn.md")).unwrap();
    for stem in LEARN {
        let link = format!("(pictures/{stem}.svg)");
        assert!(learn.contains(&link), "docs/learn.md does not show {link}");
        let golden = std::fs::read_to_string(golden_dir().join(format!("{stem}.svg")));
        let doc = std::fs::read_to_string(docs_dir().join(format!("{stem}.svg")));
        assert!(
            golden.is_ok() && golden.ok() == doc.ok(),
            "docs/pictures/{stem}.svg is missing or out of date: run `UPDATE_GOLDEN=1 cargo test --test view`"
        );
    }
}

#[test]
fn golden_pictures_of_every_bundled_scenario() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let dir = golden_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let mut stale = Vec::new();
    for (stem, name, o) in bundled_runs() {
        let opts = ViewOptions::titled(&name);
        for (ext, now) in [("svg", svg(&o, &opts)), ("mmd", mermaid(&o, &opts))] {
            let path = dir.join(format!("{stem}.{ext}"));
            if update {
                std::fs::write(&path, &now).unwrap();
                if ext == "svg" && LEARN.contains(&stem.as_str()) {
                    std::fs::create_dir_all(docs_dir()).unwrap();
                    std::fs::write(docs_dir().join(format!("{stem}.svg")), &now).unwrap();
                }
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(was) if was == now => {}
                Ok(_) => stale.push(format!("{} differs", path.display())),
                Err(_) => stale.push(format!("{} is missing", path.display())),
            }
        }
    }
    assert!(
        stale.is_empty(),
        "pictures changed; if intended, run `UPDATE_GOLDEN=1 cargo test --test view` and review the diff:\n{}",
        stale.join("\n")
    );
}

fn fontdb() -> std::sync::Arc<usvg::fontdb::Database> {
    static DB: OnceLock<std::sync::Arc<usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        std::sync::Arc::new(db)
    })
    .clone()
}

/// Parses and rasterises an SVG: the size the parser found, and the pixmap,
/// scaled down to at most about four million pixels (a 100-lane page is
/// 29,000 px wide; drawing it whole would take most of a test run).
fn render(svg: &str) -> ((u32, u32), tiny_skia::Pixmap) {
    let opt = usvg::Options { fontdb: fontdb(), ..usvg::Options::default() };
    let tree = usvg::Tree::from_str(svg, &opt).unwrap_or_else(|e| panic!("SVG must parse: {e}"));
    let size = tree.size().to_int_size();
    let scale = (4.0e6 / (size.width() as f64 * size.height() as f64)).sqrt().min(1.0) as f32;
    let (w, h) = ((size.width() as f32 * scale).ceil() as u32, (size.height() as f32 * scale).ceil() as u32);
    let mut pixmap = tiny_skia::Pixmap::new(w, h).expect("a non-empty page");
    resvg::render(&tree, tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    ((size.width(), size.height()), pixmap)
}

/// The `width`/`height` the SVG declares.
fn declared_size(svg: &str) -> (u32, u32) {
    let attr = |name: &str| -> u32 {
        let start = svg.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        let end = start + svg[start..].find('"').unwrap();
        svg[start..end].parse::<f64>().unwrap().round() as u32
    };
    (attr("width"), attr("height"))
}

/// Share of pixels that are not white, and how many distinct colours show.
fn ink(p: &tiny_skia::Pixmap) -> (f64, usize) {
    let mut colours = std::collections::BTreeSet::new();
    let mut inked = 0usize;
    for px in p.pixels() {
        let c = (px.red(), px.green(), px.blue());
        if c != (255, 255, 255) {
            inked += 1;
        }
        if colours.len() < 64 {
            colours.insert(c);
        }
    }
    (inked as f64 / p.pixels().len() as f64, colours.len())
}

/// With `VIEW_PNG_DIR` set, writes the picture as PNG to look at; a page too
/// big to draw whole also gets its top-left corner at full size.
fn save_png(name: &str, doc: &str, p: &tiny_skia::Pixmap) {
    let Some(dir) = std::env::var_os("VIEW_PNG_DIR") else { return };
    let dir = Path::new(&dir);
    std::fs::create_dir_all(dir).unwrap();
    p.save_png(dir.join(format!("{name}.png"))).unwrap();
    let (w, h) = declared_size(doc);
    if (w as u64) * (h as u64) > 4_000_000 {
        let opt = usvg::Options { fontdb: fontdb(), ..usvg::Options::default() };
        let tree = usvg::Tree::from_str(doc, &opt).unwrap();
        let mut corner = tiny_skia::Pixmap::new(w.min(1800), h.min(1400)).unwrap();
        resvg::render(&tree, tiny_skia::Transform::default(), &mut corner.as_mut());
        corner.save_png(dir.join(format!("{name}-corner.png"))).unwrap();
    }
}

#[test]
fn every_bundled_svg_renders_non_blank_at_its_size() {
    for (stem, name, o) in bundled_runs() {
        let doc = svg(&o, &ViewOptions::titled(&name));
        let (size, p) = render(&doc);
        let (w, h) = declared_size(&doc);
        assert_eq!(size, (w, h), "{stem}: parsed at the declared size");
        assert!(w >= 1000 && h >= 250, "{stem}: {w}x{h} is too small to hold a diagram");
        let (share, colours) = ink(&p);
        assert!(share > 0.01, "{stem}: only {:.3}% of the page is drawn", share * 100.0);
        assert!(colours >= 8, "{stem}: {colours} colours; the lanes' states should show");
        save_png(&stem, &doc, &p);
    }
}

#[test]
fn same_run_same_bytes() {
    let (name, a) = bundled("22-");
    let (_, b) = bundled("22-");
    let opts = ViewOptions::titled(name);
    assert_eq!(svg(&a, &opts), svg(&b, &opts));
    assert_eq!(mermaid(&a, &opts), mermaid(&b, &opts));
}

#[test]
fn a_message_lost_to_a_kill_ends_in_a_cross_with_its_cause() {
    let (name, o) = bundled("03-");
    let m = model::build(&o, &ViewOptions::default());
    let lost: Vec<_> = m.arrows.iter().filter(|a| matches!(a.fate, Fate::Lost(_))).collect();
    assert_eq!(lost.len(), 1, "{:?}", m.arrows);
    assert_eq!(lost[0].fate, Fate::Lost(handshake::trace::Cause::Killed));
    assert_eq!(lost[0].t_end.0, 61_000, "lost when alice was killed");
    let doc = svg(&o, &ViewOptions::titled(name));
    assert!(doc.contains("✕ lost: killed"), "the cross says why");
    assert!(doc.contains(r##"stroke="#d50000" stroke-width="2.5""##), "a red cross is drawn");
    let mmd = mermaid(&o, &ViewOptions::default());
    assert!(mmd.contains("p0-xp1: shutdown_request [stop-alice] · sent 1s, lost (killed) at 1m1s"), "{mmd}");
}

const DROPPY: &str = r#"
name = "droppy"
about = "The first shutdown request to alice is dropped; the second arrives."
[policy]
shutdown_timeout = "10s"
[[teammate]]
name = "alice"
[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "first"
[[step]]
at = "12s"
do = "shutdown"
to = "alice"
label = "second"
[[fault]]
kind = "drop"
type = "shutdown_request"
count = 1
"#;

#[test]
fn a_dropped_message_stops_short_of_its_receiver() {
    let (_, o) = common::run_toml(DROPPY, 1);
    let m = model::build(&o, &ViewOptions::default());
    let dropped = m.arrows.iter().find(|a| a.fate == Fate::Lost(handshake::trace::Cause::Drop)).expect("a drop");
    assert!(dropped.text.contains("[first]"), "{}", dropped.text);
    let doc = svg(&o, &ViewOptions::default());
    assert!(doc.contains("✕ lost: drop"));
    let first = m.bars.iter().find(|b| b.label == "first").unwrap();
    assert_eq!(first.fate, BarEnd::Expired(handshake::protocol::kinds::shutdown::KILL));
    let mmd = mermaid(&o, &ViewOptions::default());
    assert!(mmd.contains("p0-xp1: shutdown_request [first] · sent 1s, lost (drop) at 1s"), "{mmd}");
    check_mermaid(&mmd);
}

#[test]
fn a_forged_message_is_drawn_apart_and_says_whom_it_claims_to_be() {
    let (name, o) = bundled("13-");
    let m = model::build(&o, &ViewOptions::default());
    assert_eq!(m.lanes.last().unwrap().name, "adversary", "the adversary gets a lane when it acts");
    let forged: Vec<_> = m.arrows.iter().filter(|a| a.forged_as.is_some()).collect();
    assert_eq!(forged.len(), 1);
    assert_eq!(forged[0].forged_as.as_deref(), Some("lead"));
    let doc = svg(&o, &ViewOptions::titled(name));
    assert!(doc.contains("FORGED as lead: plan_approval_response"), "the label says whom it claims to be");
    assert!(doc.contains(r##"stroke="#d81b60" stroke-width="1.6" stroke-dasharray="7 4""##), "dashed, forged colour");
    assert!(doc.contains("wrong_sender"), "the ignore shows its reason");
    let mmd = mermaid(&o, &ViewOptions::default());
    assert!(mmd.contains("p2--)p1: FORGED as lead, plan_approval_response"), "{mmd}");

    // A run with no forgery leaves the adversary out.
    let (_, plain) = bundled("01-");
    let m = model::build(&plain, &ViewOptions::default());
    assert!(m.lanes.iter().all(|l| l.name != "adversary"));
}

#[test]
fn a_request_bar_runs_from_sending_to_its_end_state() {
    let (_, o) = bundled("03-");
    let m = model::build(&o, &ViewOptions::default());
    let bar = m.bars.iter().find(|b| b.label == "stop-alice").expect("the bar");
    assert_eq!(m.lanes[bar.lane].name, "lead", "on the requester's lifeline");
    assert_eq!(m.rows[bar.from].t.0, 1_000);
    assert_eq!(m.rows[bar.end].t.0, 61_000, "ends at its deadline");
    assert_eq!(bar.fate, BarEnd::Expired(handshake::protocol::kinds::shutdown::KILL));
    assert_eq!(bar.deadline_row, Some(bar.end));

    let (_, o) = bundled("02-");
    let m = model::build(&o, &ViewOptions::default());
    let first = m.bars.iter().find(|b| b.label == "first-ask").unwrap();
    let second = m.bars.iter().find(|b| b.label == "second-ask").unwrap();
    assert_eq!((first.fate, m.rows[first.end].t.0), (BarEnd::Rejected, 1_002));
    assert_eq!((second.fate, m.rows[second.end].t.0), (BarEnd::Approved, 3_002));
    assert_ne!(first.slot, second.slot, "both wait for their deadlines, so they stand side by side");
    assert_eq!(first.deadline_row, None, "the run ended before the deadline");
    let doc = svg(&o, &ViewOptions::default());
    assert!(doc.contains("<title>first-ask shutdown request: rejected, deadline 1m1s (after the end)</title>"));
    assert!(mermaid(&o, &ViewOptions::default())
        .contains("Note over p0,p1: 1s lead asks [first-ask] (shutdown), deadline 1m1s"));
}

#[test]
fn a_long_idle_gap_is_compressed_and_marked() {
    let (name, o) = bundled("22-");
    let opts = ViewOptions::titled(name);
    let m = model::build(&o, &opts);
    let idle: Vec<_> =
        m.rows.iter().filter_map(|r| if let Gap::Idle(ms) = r.gap { Some(ms.0) } else { None }).collect();
    assert_eq!(idle, vec![119_999], "one break for the two minutes of the deadlock");
    let doc = svg(&o, &opts);
    assert!(doc.contains("⋯ 1m59.999s idle ⋯"));
    let (_, h) = declared_size(&doc);
    assert!(h < 900, "two minutes fit in {h}px");
    assert!(mermaid(&o, &opts).contains("Note over p0,p2: ⋯ 1m59.999s idle ⋯"));

    // Without compression the same gap would be a step like any other.
    let wide = ViewOptions { idle_after: handshake::protocol::Millis::from_secs(3600), ..opts };
    let m = model::build(&o, &wide);
    assert!(m.rows.iter().all(|r| !matches!(r.gap, Gap::Idle(_))));
}

#[test]
fn a_refused_send_shows_its_rule_and_a_crash_is_a_span() {
    let (_, o) = bundled("23-");
    let doc = svg(&o, &ViewOptions::default());
    assert!(doc.contains("⊘ refused plan_approval_request → bob: strict-hierarchy"), "{doc}");

    let (_, o) = bundled("19-");
    let m = model::build(&o, &ViewOptions::default());
    let crashes: Vec<_> = m.spans.iter().filter(|s| s.kind == model::SpanKind::Crash).collect();
    assert_eq!(crashes.len(), 2);
    let alice = crashes.iter().find(|s| m.lanes[s.lane].name == "alice").unwrap();
    assert!(!alice.open && m.rows[alice.to].t.0 == 6_200, "alice's crash ends at her restart");
    let bob = crashes.iter().find(|s| m.lanes[s.lane].name == "bob").unwrap();
    assert!(bob.open, "bob never comes back");
    let mmd = mermaid(&o, &ViewOptions::default());
    assert_eq!(mmd.matches("\n        rect ").count() + mmd.matches("\n    rect ").count(), 2, "{mmd}");
    check_mermaid(&mmd);
}

/// A team of 60 under drops, a crash and a stall: a large run stays complete.
fn big_team() -> String {
    let mut s = String::from(
        r#"
name = "big"
about = "60 workers, some messages dropped, one crash, one stall."
[policy]
latency = "1ms..20ms"
shutdown_timeout = "30s"
[[teammate]]
name = "worker"
count = 60
work = [{ shell = "cargo test", steps = 2, step_time = "500ms" }]
[[fault]]
kind = "drop"
type = "shutdown_response"
probability = 0.2
[[fault]]
kind = "crash"
agent = "worker-7"
at = "1001ms"
[[fault]]
kind = "stall"
agent = "worker-9"
at = "500ms"
until = "20s"
"#,
    );
    for i in 1..=60 {
        s.push_str(&format!("[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"worker-{i}\"\n"));
    }
    s
}

/// Issue 22: alike workers are one lane, whoever did something different
/// (the crashed one, the stalled one, those whose answers were dropped) a
/// lane of its own, and nothing is left out: every message, request and
/// agent is drawn or counted in a group's lane.
#[test]
fn a_team_of_sixty_is_drawn_whole_with_alike_workers_as_one_lane() {
    let (_, o) = common::run_toml(&big_team(), 3);
    let m = model::build(&o, &ViewOptions::default());
    assert_eq!(m.lanes.iter().map(|l| l.stands_for).sum::<usize>(), 61, "every agent drawn or counted");
    let groups: Vec<&model::Lane> = m.lanes.iter().filter(|l| l.stands_for > 1).collect();
    assert_eq!(groups.len(), 1, "one group of alike workers");
    assert!(groups[0].name.starts_with("worker-* ×"), "{}", groups[0].name);
    assert!(m.lanes.len() > 3 && m.lanes.len() < 40, "outliers on their own lanes: {}", m.lanes.len());
    let delivered_or_lost = o
        .events
        .iter()
        .filter(|e| {
            matches!(e.event, handshake::trace::Event::Deliver { .. } | handshake::trace::Event::Dropped { .. })
        })
        .count();
    let in_flight: usize = m.arrows.iter().filter(|a| a.fate == Fate::InFlight).map(|a| a.times).sum();
    let drawn: usize = m.arrows.iter().map(|a| a.times).sum();
    assert_eq!(drawn, delivered_or_lost + in_flight, "an arrow, or a share of one, for every delivery and loss");
    assert!(m.arrows.iter().any(|a| matches!(a.fate, Fate::Lost(_))), "some were dropped");
    assert_eq!(m.bars.iter().map(|b| b.times).sum::<usize>(), 60);
    let doc = svg(&o, &ViewOptions::titled("big"));
    // Whoever a lost answer, a crash or a stall touched did something the group did not.
    let mut touched = std::collections::BTreeSet::new();
    for e in &o.events {
        match &e.event {
            handshake::trace::Event::Dropped { seq, .. } => {
                let from = o.events.iter().find_map(|s| match &s.event {
                    handshake::trace::Event::Send { seq: q, from, .. } if q == seq => Some(*from),
                    _ => None,
                });
                touched.extend(from);
            }
            handshake::trace::Event::Crash { agent, .. } | handshake::trace::Event::Stall { agent, .. } => {
                touched.insert(*agent);
            }
            _ => {}
        }
    }
    assert!(touched.len() >= 3, "{touched:?}");
    for a in touched {
        let name = o.names.agent(a);
        assert!(doc.contains(&format!(">{name}<")), "{name} did something different and has a lane of its own");
    }
    let (_, p) = render(&doc);
    let (w, _) = declared_size(&doc);
    assert!(w < 60 * 200, "the group keeps the page narrow: {w}px");
    assert!(ink(&p).0 > 0.005);
    save_png("big-team", &doc, &p);
    check_mermaid(&mermaid(&o, &ViewOptions::default()));
}

/// Issue 22: 21's hundred workers fit a screen, every lane's name on it.
#[test]
fn the_whole_team_shutdown_fits_a_screen() {
    let (name, o) = bundled("21-");
    let doc = svg(&o, &ViewOptions::titled(&name));
    let (w, h) = declared_size(&doc);
    assert!(w <= 1600 && h <= 1200, "{w} x {h}");
    assert!(doc.contains(">lead<") && doc.contains(">worker-* ×100<"), "both lanes named");
    assert!(doc.contains("101 agents (alike teammates drawn as one: worker-* ×100)"));
    assert!(doc.contains("200 message arrows") && doc.contains("100 requests"));
}

/// Issue 22: a run of uneventful work steps is one break (04 drew 19 rows
/// of a file's ticks, a third of its page), which says what it holds.
#[test]
fn uneventful_work_is_folded_like_idle_time() {
    let (_, o) = bundled("04-");
    let m = model::build(&o, &ViewOptions::default());
    let folded: Vec<(usize, u64)> = m
        .rows
        .iter()
        .filter_map(|r| if let Gap::Folded { steps, over } = r.gap { Some((steps, over.0)) } else { None })
        .collect();
    assert!(!folded.is_empty(), "{:?}", m.rows);
    assert_eq!(folded.iter().map(|f| f.0).sum::<usize>(), 19, "every folded step counted: {folded:?}");
    let ticks = m.marks.iter().filter(|mk| mk.kind == model::MarkKind::FileStep).count();
    assert_eq!(ticks, 0, "the ticks are in the breaks");
    let doc = svg(&o, &ViewOptions::default());
    assert!(doc.contains("work steps, nothing else ⋯"), "the break says what it holds");
    // Nothing but ticks is folded: every other event still has its row.
    let asked = m.marks.iter().any(|mk| mk.text.contains("leaves [stop-alice] unanswered"));
    assert!(asked);
}

#[test]
fn text_is_escaped_for_xml_and_for_mermaid() {
    let toml = r#"
name = "words"
about = "A message full of characters that markup and Mermaid care about."
[[teammate]]
name = "alice"
[[step]]
at = "1s"
do = "message"
to = "alice"
text = "a<b & c>d \"q\" 'x' ; #1: 100%% {ok}"
"#;
    let (_, o) = common::run_toml(toml, 1);
    let doc = svg(&o, &ViewOptions::titled("<words & more>"));
    render(&doc);
    assert!(doc.contains("a&lt;b &amp; c&gt;d &quot;q&quot; &apos;x&apos;"), "{doc}");
    assert!(doc.contains("&lt;words &amp; more&gt;"));
    let mmd = mermaid(&o, &ViewOptions::default());
    check_mermaid(&mmd);
    assert!(mmd.contains("a#lt;b & c#gt;d \"q\" 'x' #59; #35;1#58; 100#37;#37; #123;ok#125;"), "{mmd}");
}

#[test]
fn every_bundled_mermaid_is_well_formed() {
    for (stem, _, o) in bundled_runs() {
        let mmd = mermaid(&o, &ViewOptions::titled(&stem));
        std::panic::catch_unwind(|| check_mermaid(&mmd)).unwrap_or_else(|_| panic!("{stem}:\n{mmd}"));
    }
}

/// Checks the subset of Mermaid's sequenceDiagram grammar the renderer
/// writes: every line a known statement, participants declared before use,
/// `rect`/`end` balanced, and no character Mermaid would read as syntax left
/// in any text.
fn check_mermaid(mmd: &str) {
    let mut lines = mmd.lines();
    assert_eq!(lines.next(), Some("sequenceDiagram"));
    let mut declared = std::collections::BTreeSet::new();
    let mut depth = 0i32;
    let clean = |text: &str| {
        let mut t = text.to_string();
        for entity in ["#lt;", "#gt;"] {
            t = t.replace(entity, "");
        }
        // Numeric entity codes: #<digits>;
        let mut out = String::new();
        let mut rest = t.as_str();
        while let Some(i) = rest.find('#') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            let digits = after.chars().take_while(|c| c.is_ascii_digit()).count();
            assert!(digits > 0 && after[digits..].starts_with(';'), "a bare # in {text:?}");
            rest = &after[digits + 1..];
        }
        out.push_str(rest);
        for bad in [';', '#', ':', '<', '>', '%', '{', '}', '\n'] {
            assert!(!out.contains(bad), "{bad:?} left in {text:?}");
        }
        assert!(!out.trim().is_empty(), "empty text");
    };
    let participant = |p: &str, declared: &std::collections::BTreeSet<String>| {
        assert!(declared.contains(p), "{p} used before it was declared");
    };
    for line in lines {
        let l = line.trim();
        if l.starts_with("%%") || l == "autonumber" {
            continue;
        }
        if let Some(rest) = l.strip_prefix("participant ") {
            let (id, alias) = rest.split_once(" as ").expect("participant ID as NAME");
            assert!(id.starts_with('p') && id[1..].chars().all(|c| c.is_ascii_digit()), "{l}");
            clean(alias);
            declared.insert(id.to_string());
        } else if let Some(rest) = l.strip_prefix("Note over ") {
            let (who, text) = rest.split_once(": ").expect("Note over X: text");
            for p in who.split(',') {
                participant(p, &declared);
            }
            clean(text);
        } else if l.starts_with("rect rgba(") && l.ends_with(')') {
            depth += 1;
        } else if l == "end" {
            depth -= 1;
            assert!(depth >= 0, "an end with no rect");
        } else {
            let (head, text) = l.split_once(": ").unwrap_or_else(|| panic!("not a statement: {l}"));
            let arrow = ["-->>", "->>", "--x", "-x", "--)", "-)"]
                .into_iter()
                .find(|a| head.contains(a))
                .unwrap_or_else(|| panic!("no arrow in {l}"));
            let (from, to) = head.split_once(arrow).unwrap();
            participant(from, &declared);
            participant(to, &declared);
            clean(text);
        }
    }
    assert_eq!(depth, 0, "every rect has its end");
}

/// Every text node's box as usvg lays it out with the machine's fonts (none
/// when the machine has no font: then nothing can be measured).
fn text_boxes(doc: &str) -> Vec<(String, usvg::Rect)> {
    fn walk(g: &usvg::Group, out: &mut Vec<(String, usvg::Rect)>) {
        for node in g.children() {
            match node {
                usvg::Node::Group(g) => walk(g, out),
                usvg::Node::Text(t) => {
                    let words: String = t.chunks().iter().map(|c| c.text()).collect();
                    out.push((words, t.abs_bounding_box()));
                }
                _ => {}
            }
        }
    }
    let opt = usvg::Options { fontdb: fontdb(), ..usvg::Options::default() };
    let tree = usvg::Tree::from_str(doc, &opt).expect("SVG must parse");
    let mut out = Vec::new();
    walk(tree.root(), &mut out);
    out
}

/// Issue 22: the legend wraps inside the canvas (22 and 26 drew their last
/// entry, "stuck in a deadlock", at x = 1020 of 1000), and a request with
/// no deadline says so instead of printing `Millis::NEVER` as a time.
#[test]
#[cfg_attr(
    not(has_fonts),
    ignore = "needs a font to measure text, none found when the tests were built: apt-get install fonts-dejavu-core"
)]
fn the_legend_fits_the_canvas_and_no_deadline_is_drawn_as_such() {
    assert!(!fontdb().is_empty(), "the tests were built where fonts were found, and now none is");
    for (stem, name, o) in bundled_runs() {
        let doc = svg(&o, &ViewOptions::titled(&name));
        let (width, _) = declared_size(&doc);
        let boxes = text_boxes(&doc);
        let legend: Vec<&(String, usvg::Rect)> = boxes.iter().filter(|(_, b)| b.top() < 160.0).collect();
        assert!(legend.iter().any(|(w, _)| w == "stuck in a deadlock"), "{stem}: the legend's last entry");
        for (words, b) in legend {
            assert!(
                b.left() >= 0.0 && b.right() <= width as f32,
                "{stem}: `{words}` spans {}..{} of {width}",
                b.left(),
                b.right()
            );
        }
        for doc in [doc.as_str(), &mermaid(&o, &ViewOptions::titled(&name))] {
            assert!(!doc.contains("307445734561825"), "{stem}: Millis::NEVER drawn as a time");
        }
    }
    let (name, o) = bundled("26-");
    let doc = svg(&o, &ViewOptions::titled(&name));
    assert!(doc.contains("no deadline"), "26 turns timeouts off: its requests have no deadline");
}

/// Issue 22: no text leaves the canvas: "ignores …" and "refused …" marks
/// ran off the right edge (22, 23, 27), and a long message's words started
/// off the left one (37, 38, 39). Measured by usvg with the machine's fonts.
#[test]
#[cfg_attr(
    not(has_fonts),
    ignore = "needs a font to measure text, none found when the tests were built: apt-get install fonts-dejavu-core"
)]
fn no_text_of_any_bundled_picture_leaves_the_canvas() {
    assert!(!fontdb().is_empty(), "the tests were built where fonts were found, and now none is");
    let mut off = Vec::new();
    let mut measured = 0;
    for (stem, name, o) in bundled_runs() {
        let doc = svg(&o, &ViewOptions::titled(&name));
        let (width, height) = declared_size(&doc);
        for (words, b) in text_boxes(&doc) {
            measured += 1;
            if b.left() < 0.0 || b.right() > width as f32 || b.top() < 0.0 || b.bottom() > height as f32 {
                off.push(format!("{stem}: {:.0}..{:.0} of {width}: {words}", b.left(), b.right()));
            }
        }
    }
    assert!(measured > 1000, "only {measured} texts measured");
    assert!(off.is_empty(), "texts off the canvas:\n{}", off.join("\n"));
}

/// A bundled run with the simulator's frames kept, as `run --html` runs it.
fn framed(stem_prefix: &str) -> Outcome {
    let f = common::bundled_files()
        .into_iter()
        .find(|f| f.file_stem().unwrap().to_string_lossy().starts_with(stem_prefix))
        .expect("bundled");
    let s = load_file(&f).expect("loads");
    let opts = RunOptions { keep_outcome: true, frames: true, ..RunOptions::default() };
    run_scenario(&s, s.default_seed(), opts).outcome.take().expect("kept")
}

/// The page's look-up, in Rust: the last entry of `list` stamped `k + 1` or less.
fn frame_at(list: &[serde_json::Value], k: usize) -> Option<&serde_json::Value> {
    list.iter().take_while(|f| f[0].as_u64().unwrap() as usize <= k + 1).last()
}

/// Issue 22, point 1: the page steps through the run on the simulator's own
/// states. For every bundled scenario the frames end where the run ended
/// (each agent's table and the roster as the outcome has them), and in 22
/// the step that names the deadlock shows both waits and the cycle, and the
/// step after shows the request bob put aside.
#[test]
fn the_steps_are_the_simulators_own_states_from_start_to_end() {
    for f in common::bundled_files() {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        let o = framed(&stem);
        let steps = handshake::view::steps::steps(&o).expect("frames kept");
        let frames = &steps["frames"];
        for part in ["agents", "world"] {
            let stamps: Vec<u64> = frames[part].as_array().unwrap().iter().map(|f| f[0].as_u64().unwrap()).collect();
            assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stem}: {part} frames out of order");
            assert!(stamps.iter().all(|&s| s as usize <= o.events.len() + 1), "{stem}: {part} stamped past the log");
        }
        let end = o.events.len().max(1) - 1;
        let world = frame_at(frames["world"].as_array().unwrap(), end).expect("a world frame");
        let roster: Vec<String> = o.roster.iter().map(|s| s.as_str().to_string()).collect();
        assert_eq!(world[1]["roster"], serde_json::json!(roster), "{stem}: the roster at the end");
        // Each agent's table, its frames' rows merged in order, is the outcome's.
        for (i, name) in o.names.agents.iter().take(o.roster.len()).enumerate() {
            let mut table = std::collections::BTreeMap::new();
            for fr in frames["agents"].as_array().unwrap().iter().filter(|fr| fr[1] == i) {
                for r in fr[2]["requests"].as_array().unwrap() {
                    table.insert(r["label"].as_str().unwrap().to_string(), r["status"].as_str().unwrap().to_string());
                }
            }
            let want: std::collections::BTreeMap<String, String> = o
                .requests
                .iter()
                .filter(|r| r.requester.index() == i)
                .map(|r| (o.names.label(r.id).unwrap_or_default().to_string(), r.status.as_str().to_string()))
                .collect();
            assert_eq!(table, want, "{stem}: {name}'s requests at the end");
        }
    }
    let o = framed("22-");
    let steps = handshake::view::steps::steps(&o).unwrap();
    let events = steps["events"].as_array().unwrap();
    let k = events.iter().position(|e| e["text"].as_str().unwrap().starts_with("DEADLOCK")).expect("22 deadlocks");
    let world = &frame_at(steps["frames"]["world"].as_array().unwrap(), k).unwrap()[1];
    assert_eq!(world["waits"].as_array().unwrap().len(), 2, "{world}");
    assert_eq!(world["cycles"], serde_json::json!([["bob", "alice"]]), "{world}");
    let k = events.iter().position(|e| e["text"].as_str().unwrap().starts_with("bob is blocked waiting")).unwrap();
    let bobs: Vec<serde_json::Value> =
        steps["frames"]["agents"].as_array().unwrap().iter().filter(|f| f[1] == 2).cloned().collect();
    let bob = &frame_at(&bobs, k).unwrap()[2];
    assert_eq!(bob["set_aside"], serde_json::json!(["plan_approval_request [alice-asks-bob] from alice"]), "{bob}");
    assert!(bob["doing"].as_str().unwrap().contains("1 request(s) set aside"), "{bob}");
    // File mode (34): the inbox file as it is at each step, lines and all:
    // the shutdown request lands in it during alice's read, and the
    // truncate that ends the read wipes it.
    let o = framed("34-");
    let steps = handshake::view::steps::steps(&o).unwrap();
    let events = steps["events"].as_array().unwrap();
    let world = steps["frames"]["world"].as_array().unwrap();
    let lines_at = |prefix: &str| {
        let k = events.iter().position(|e| e["text"].as_str().unwrap().starts_with(prefix)).expect(prefix);
        let w = &frame_at(world, k).unwrap()[1];
        let file = w["inbox"].as_array().unwrap().iter().find(|f| f["path"] == "alice.jsonl").expect("alice's file");
        file["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    let landed = lines_at("message #2 appended to alice.jsonl");
    assert_eq!(landed.len(), 2, "{landed:?}");
    assert!(landed[1].contains("shutdown_request"), "{landed:?}");
    assert_eq!(lines_at("LOST shutdown_request to alice (drain_loss)"), Vec::<String>::new());
}

/// The page's own script, driven under Node (a stand-in for a browser, which
/// issue 22's point 6 still asks for): stepping to 22's deadlock shows the
/// cycle and highlights the event, and stepping back moves the highlight.
#[test]
#[cfg_attr(
    not(has_node),
    ignore = "needs node, not found when the tests were built, to run the page's script: apt-get install nodejs"
)]
fn the_page_steps_forward_and_back_under_node() {
    let dir = std::env::temp_dir().join(format!("handshake-step-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("22.html");
    let ran = std::process::Command::new(env!("CARGO_BIN_EXE_handshake"))
        .args(["run", "scenarios/22-peer-deadlock.toml", "--html"])
        .arg(&page)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js/step.js");
    let out = std::process::Command::new("node").arg(script).arg(&page).arg("^DEADLOCK").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    for want in [
        "WHERE event 7 of 20 · 1s",
        "SAID 1s  DEADLOCK bob → alice → bob",
        "alice waits on bob for [alice-asks-bob] · bob waits on alice for [bob-asks-alice]",
        "⟳ deadlock: bob → alice → bob",
        "alice-asks-bob plan alice → bob pending 2m1s (2m left)",
        "HIGHLIGHTED true",
        "BACK event 6 of 20 · 1s true true",
    ] {
        assert!(text.contains(want), "the page does not show {want:?}:\n{text}");
    }
}

/// Issue 22: no label overlaps another on any bundled picture: crossing
/// requests hid each other (22, 27), ten appends were drawn as one arrow on
/// top of each other (37), a hundred captions ran together (21). Two texts
/// overlap when their boxes, as usvg lays them out, share more than a pixel
/// each way.
#[test]
#[cfg_attr(
    not(has_fonts),
    ignore = "needs a font to measure text, none found when the tests were built: apt-get install fonts-dejavu-core"
)]
fn no_label_of_any_bundled_picture_overlaps_another() {
    assert!(!fontdb().is_empty(), "the tests were built where fonts were found, and now none is");
    let mut clashes = Vec::new();
    let mut total = 0;
    for (stem, name, o) in bundled_runs() {
        let doc = svg(&o, &ViewOptions::titled(&name));
        let mut boxes = text_boxes(&doc);
        boxes.sort_by(|a, b| a.1.top().total_cmp(&b.1.top()));
        let mut here = 0;
        for (i, (wa, a)) in boxes.iter().enumerate() {
            for (wb, b) in &boxes[i + 1..] {
                if b.top() >= a.bottom() - 1.0 {
                    break;
                }
                let dx = a.right().min(b.right()) - a.left().max(b.left());
                let dy = a.bottom().min(b.bottom()) - a.top().max(b.top());
                if dx > 1.0 && dy > 1.0 {
                    here += 1;
                    if here <= 6 {
                        clashes.push(format!(
                            "{stem}: `{wa}` ({:.0},{:.0}) and `{wb}` ({:.0},{:.0})",
                            a.left(),
                            a.top(),
                            b.left(),
                            b.top()
                        ));
                    }
                }
            }
        }
        if here > 6 {
            clashes.push(format!("{stem}: … {here} overlapping pairs in all"));
        }
        total += here;
    }
    assert!(clashes.is_empty(), "{total} overlapping labels:\n{}", clashes.join("\n"));
}

/// Issue 22: a file left partly written shows where its writer went down
/// and at the end of the page, not only as the last tick's tooltip (03, 19).
#[test]
fn a_file_left_partial_is_drawn_as_such() {
    let (_, killed) = bundled("03-");
    let doc = svg(&killed, &ViewOptions::default());
    assert!(doc.contains(">killed · leaves src/auth.rs 1/400 written<"), "where the kill cut the write");
    assert!(doc.contains(">▤ src/auth.rs partial at the end: 1/400 written<"));
    let (_, crashed) = bundled("19-");
    let doc = svg(&crashed, &ViewOptions::default());
    // Words too long for their room are drawn on two lines.
    let words: Vec<&str> =
        doc.split("</text>").filter_map(|t| t.rsplit_once('>').map(|(_, w)| w)).filter(|w| !w.is_empty()).collect();
    assert!(words.join(" ").contains("· leaves src/auth.rs 2/4 written"), "the crash cut auth.rs at 2 of 4");
    assert!(!doc.contains("src/auth.rs partial at the end"), "the restart finished it");
    let (_, whole) = bundled("01-");
    assert!(!svg(&whole, &ViewOptions::default()).contains("partial"), "nothing partial, nothing said");
}

/// Issue 22's budget: a page of 100 teammates under 2 MB, stepper included.
#[test]
fn a_page_of_a_hundred_teammates_stays_under_two_megabytes() {
    let f = common::bundled_files()
        .into_iter()
        .find(|f| f.file_stem().unwrap().to_string_lossy().starts_with("21-"))
        .expect("bundled");
    let s = load_file(&f).expect("loads");
    let opts = RunOptions { keep_outcome: true, frames: true, ..RunOptions::default() };
    let mut report = run_scenario(&s, s.default_seed(), opts);
    let o = report.outcome.take().expect("kept");
    let svg = svg(&o, &ViewOptions::titled(&s.name));
    let page =
        handshake::view::html::Page { about: &s.about, report: &report, reproduce: "handshake run 21", svg: &svg };
    let html = handshake::view::html::html(&o, &page);
    assert!(html.contains("id=\"steps\""), "the stepper's data is in the page");
    assert!(html.len() < 2 << 20, "{} bytes", html.len());
}

/// Issue 44, point 6: a run that passes but ends deadlocked says so in its
/// verdict (26: no timeouts, the file allows the deadlock), not a bare green
/// PASS; one whose deadlock was broken (22) is a plain pass.
#[test]
fn a_pass_that_ends_deadlocked_says_so_beside_its_verdict() {
    let page_of = |prefix: &str| {
        let f = common::bundled_files()
            .into_iter()
            .find(|f| f.file_stem().unwrap().to_string_lossy().starts_with(prefix))
            .expect("bundled");
        let s = load_file(&f).expect("loads");
        let mut report = run_scenario(&s, s.default_seed(), RunOptions { keep_outcome: true, ..RunOptions::default() });
        let o = report.outcome.take().expect("kept");
        let svg = svg(&o, &ViewOptions::titled(&s.name));
        let page = handshake::view::html::Page { about: &s.about, report: &report, reproduce: "", svg: &svg };
        (report.passed, handshake::view::html::html(&o, &page))
    };
    let (passed, stuck) = page_of("26-");
    assert!(passed);
    assert!(stuck.contains("<div class=\"verdict pass deadlocked\">PASS · DEADLOCKED</div>"), "the verdict says it");
    assert!(stuck.contains("but the run ended deadlocked: bob → alice → bob"));
    let (_, broken) = page_of("22-");
    assert!(broken.contains("<div class=\"verdict pass\">PASS</div>"), "a broken deadlock is a plain pass");
}

/// What a picture draws besides its text, as the SVG library lays it out:
/// each stroked line piece (with half its stroke's width) and each filled
/// area, in drawing order with the texts.
enum Drawn {
    Text(String, usvg::Rect),
    Line((f32, f32), (f32, f32), f32),
    Area(usvg::Rect, bool),
}

/// Everything drawn below the lanes' names, in order: the heading and the
/// legend above them are laid out on their own rows, the faint time grid
/// and the shaded breaks are the page's ruling (labels sit on them as on
/// ruled paper), and the white page is the ground. An area whose id starts
/// with `plate` is a label's card: it hides what was drawn before it.
fn drawn(doc: &str) -> Vec<Drawn> {
    fn walk(g: &usvg::Group, top: f32, out: &mut Vec<Drawn>) {
        for node in g.children() {
            match node {
                usvg::Node::Group(g) => walk(g, top, out),
                usvg::Node::Text(t) => {
                    let b = t.abs_bounding_box();
                    if b.top() >= top {
                        out.push(Drawn::Text(t.chunks().iter().map(|c| c.text()).collect(), b));
                    }
                }
                usvg::Node::Path(p) => {
                    let b = p.abs_bounding_box();
                    if b.bottom() <= top {
                        continue;
                    }
                    let colour = |paint: &usvg::Paint| match paint {
                        usvg::Paint::Color(c) => (c.red, c.green, c.blue),
                        _ => (0, 0, 0),
                    };
                    // A <line> has a fill too, which paints nothing: only a
                    // closed outline is an area.
                    let closed = p.data().segments().any(|s| matches!(s, usvg::tiny_skia_path::PathSegment::Close));
                    if let Some(f) = p.fill().filter(|_| closed) {
                        let c = colour(f.paint());
                        let ruling = c == (0xf3, 0xf3, 0xf3) || (c == (0xff, 0xff, 0xff) && b.top() <= 0.0);
                        if !ruling {
                            out.push(Drawn::Area(b, p.id().starts_with("plate")));
                        }
                        continue;
                    }
                    let Some(s) = p.stroke() else { continue };
                    if colour(s.paint()) == (0xee, 0xee, 0xee) {
                        continue;
                    }
                    let half = s.width().get() / 2.0;
                    let ts = p.abs_transform();
                    let mut at = usvg::tiny_skia_path::Point::zero();
                    let mut start = at;
                    let map = |mut q: usvg::tiny_skia_path::Point| {
                        ts.map_point(&mut q);
                        (q.x, q.y)
                    };
                    for seg in p.data().segments() {
                        use usvg::tiny_skia_path::PathSegment as S;
                        let to = match seg {
                            S::MoveTo(q) => {
                                at = q;
                                start = q;
                                continue;
                            }
                            S::LineTo(q) | S::QuadTo(_, q) | S::CubicTo(_, _, q) => q,
                            S::Close => start,
                        };
                        out.push(Drawn::Line(map(at), map(to), half));
                        at = to;
                    }
                }
                _ => {}
            }
        }
    }
    let opt = usvg::Options { fontdb: fontdb(), ..usvg::Options::default() };
    let tree = usvg::Tree::from_str(doc, &opt).expect("SVG must parse");
    let top = lanes_top(doc);
    let mut out = Vec::new();
    walk(tree.root(), top, &mut out);
    out
}

/// Where the lanes start: where their first lifeline does.
fn lanes_top(doc: &str) -> f32 {
    doc.split(r##"stroke="#cfd8dc""##)
        .next()
        .and_then(|head| head.rsplit("y1=\"").next())
        .and_then(|s| s.split('"').next())
        .and_then(|s| s.parse::<f32>().ok())
        .unwrap_or(0.0)
}

/// Whether a line piece from `a` to `b`, `half` wide each side, meets the
/// box `r` (shrunk by a pixel: a stroke that grazes a glyph's edge hides
/// nothing). Clips the piece to the box grown by `half` (Liang–Barsky).
fn line_meets(a: (f32, f32), b: (f32, f32), half: f32, r: &usvg::Rect) -> bool {
    let (x0, y0, x1, y1) =
        (r.left() + 1.0 - half, r.top() + 1.0 - half, r.right() - 1.0 + half, r.bottom() - 1.0 + half);
    if x0 >= x1 || y0 >= y1 {
        return false;
    }
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    for (p, q) in [(-dx, a.0 - x0), (dx, x1 - a.0), (-dy, a.1 - y0), (dy, y1 - a.1)] {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    t0 < t1
}

fn area_meets(a: &usvg::Rect, r: &usvg::Rect) -> bool {
    a.left() < r.right() - 1.0 && r.left() + 1.0 < a.right() && a.top() < r.bottom() - 1.0 && r.top() + 1.0 < a.bottom()
}

fn contains(a: &usvg::Rect, r: &usvg::Rect) -> bool {
    a.left() <= r.left() + 1.0
        && r.right() - 1.0 <= a.right()
        && a.top() <= r.top() + 1.0
        && r.bottom() - 1.0 <= a.bottom()
}

/// Each label of `doc` that a line, bar, arrow or mark crosses, with what
/// crosses it: a shape drawn before a card (a `plate`) that holds the whole
/// label is hidden by it, and a filled shape that holds the whole label is
/// its ground (a caption written inside its own bar).
fn crossed_labels(doc: &str) -> Vec<String> {
    let all = drawn(doc);
    let mut found = Vec::new();
    // A card hides lines, never a shape: a mark or a bar under it would be gone.
    for (p, item) in all.iter().enumerate() {
        let Drawn::Area(card, true) = item else { continue };
        for shape in &all[..p] {
            if let Drawn::Area(a, false) = shape {
                if area_meets(a, card) {
                    found.push(format!(
                        "a card at ({:.0},{:.0}) hides a shape at ({:.0},{:.0})",
                        card.left(),
                        card.top(),
                        a.left(),
                        a.top()
                    ));
                }
            }
        }
    }
    for (t, item) in all.iter().enumerate() {
        let Drawn::Text(words, r) = item else { continue };
        // Hidden: drawn before a card that holds the whole label.
        let hidden =
            |s: usize| s < t && all[s + 1..t].iter().any(|d| matches!(d, Drawn::Area(p, true) if contains(p, r)));
        for (s, shape) in all.iter().enumerate() {
            let what = match shape {
                Drawn::Line(a, b, half) if line_meets(*a, *b, *half, r) => {
                    format!("a line ({:.0},{:.0})–({:.0},{:.0})", a.0, a.1, b.0, b.1)
                }
                Drawn::Area(a, false) if area_meets(a, r) && !contains(a, r) => {
                    format!("a shape at ({:.0},{:.0}) {:.0}×{:.0}", a.left(), a.top(), a.width(), a.height())
                }
                _ => continue,
            };
            if hidden(s) {
                continue;
            }
            found.push(format!("`{words}` at ({:.0},{:.0}) is crossed by {what}", r.left(), r.top()));
        }
    }
    found
}

/// Issue 44: nothing crosses a label. Each text below the names is measured
/// against every line, bar, arrow and mark of every bundled picture, as the
/// SVG library lays them out; a label on its own card hides what is under it.
#[test]
#[cfg_attr(
    not(has_fonts),
    ignore = "needs a font to measure text, none found when the tests were built: apt-get install fonts-dejavu-core"
)]
fn no_line_of_any_bundled_picture_crosses_a_label() {
    assert!(!fontdb().is_empty(), "the tests were built where fonts were found, and now none is");
    let mut report = Vec::new();
    let mut total = 0;
    for (stem, name, o) in bundled_runs() {
        let doc = svg(&o, &ViewOptions::titled(&name));
        // Every text is measured: a font that matched none would leave the
        // texts out of the layout, and nothing would be found crossed.
        let measured = drawn(&doc).iter().filter(|d| matches!(d, Drawn::Text(..))).count();
        let top = lanes_top(&doc);
        let below = doc
            .split("<text ")
            .skip(1)
            .filter_map(|t| t.split("y=\"").nth(1)?.split('"').next()?.parse::<f32>().ok())
            .filter(|y| *y > top + 2.0)
            .count();
        assert!(measured >= below && below > 0, "{stem}: {measured} texts measured of {below} drawn below the names");
        let found = crossed_labels(&doc);
        total += found.len();
        for f in found.iter().take(4) {
            report.push(format!("{stem}: {f}"));
        }
        if found.len() > 4 {
            report.push(format!("{stem}: … {} crossings in all", found.len()));
        }
    }
    assert!(report.is_empty(), "{total} labels crossed:\n{}", report.join("\n"));
}

/// Each mark's words and each arrow's label are drawn somewhere (a label
/// with no place left is drawn where it is least in the way, never left
/// out): on every bundled picture, and on a note between two breaks, which
/// once had no place at all.
#[test]
fn no_label_is_left_out_of_a_picture() {
    let between_breaks = handshake::scenario::load_str(
        "note-between-breaks.toml",
        "name = \"note-between-breaks\"\nabout = \"a partition cut and healed with idle time on both sides\"\n\
         [[teammate]]\nname = \"alice\"\nwork = []\n\
         [[fault]]\nkind = \"partition\"\nbetween = [\"lead\", \"alice\"]\nat = \"10s\"\nuntil = \"20s\"\n\
         [[step]]\nat = \"30s\"\ndo = \"shutdown\"\nto = \"alice\"\n",
    )
    .expect("the scenario loads");
    let mut r = run_scenario(&between_breaks, 1, RunOptions { keep_outcome: true, ..RunOptions::default() });
    let mut runs = vec![("note-between-breaks".to_string(), r.outcome.take().expect("kept"))];
    runs.extend(bundled_runs().into_iter().map(|(stem, _, o)| (stem, o)));
    let mut missing = Vec::new();
    for (stem, o) in &runs {
        let doc = svg(o, &ViewOptions::default());
        let words: String = doc
            .split("</text>")
            .filter_map(|t| t.rsplit_once('>').map(|(_, w)| w))
            .collect::<Vec<_>>()
            .join(" ")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'");
        let m = model::build(o, &ViewOptions::default());
        let marks = m.marks.iter().filter(|mk| mk.kind != model::MarkKind::FileStep).map(|mk| mk.text.clone());
        for text in marks.chain(m.arrows.iter().map(|a| a.text.clone())) {
            if !words.contains(&text) {
                missing.push(format!("{stem}: `{text}`"));
            }
        }
    }
    assert!(missing.is_empty(), "labels left out:\n{}", missing.join("\n"));
}

/// A scenario author's review: a long text sent to many made pictures
/// quadratic in the text's length (each cut of an over-long line measured
/// anew) and held the text once per recipient (1 MiB to a thousand
/// teammates took 1.2 GB for a Mermaid file of 1 MB). Pictures now show a
/// message's first few hundred characters; the trace keeps it whole.
#[test]
fn a_long_text_sent_to_many_makes_pictures_of_bounded_size() {
    let text = "word ".repeat(20_000) + &"x".repeat(20_000);
    let toml = format!(
        "name = \"long\"\n[[teammate]]\nname = \"w\"\ncount = 40\n[[step]]\nat = \"1s\"\ndo = \"broadcast\"\ntext = \"{text}\"\n"
    );
    let (_, o) = common::run_toml(&toml, 1);
    let opts = ViewOptions::default();
    let (svg_text, mermaid_text) = (svg(&o, &opts), mermaid(&o, &opts));
    assert!(svg_text.len() < 200_000, "the SVG holds {} bytes", svg_text.len());
    assert!(mermaid_text.len() < 50_000, "the Mermaid file holds {} bytes", mermaid_text.len());
    let m = model::build(&o, &opts);
    for a in &m.arrows {
        let shown = a.words.as_deref().unwrap_or("");
        assert!(shown.chars().count() < 500, "an arrow's words are cut: {} chars", shown.chars().count());
        assert!(a.words.is_none() || shown.contains("120000 bytes in all"), "{shown:.80}");
    }
}
