//! Issue 23, point 1: a run's history (`run --trace`) read back judges the
//! same: every bundled scenario's trace, written with its header and read
//! again, gives the events back line for line and the oracle's verdict
//! word for word. And a history that cannot be read says which line and why.

mod common;

use handshake::history;
use handshake::oracle::{check, check_log, Log};
use handshake::scenario::{load_file, run_scenario, RunOptions};

#[test]
fn every_bundled_history_reads_back_to_the_same_events_and_the_same_verdict() {
    let mut judged = 0;
    let mut broken = 0;
    for f in common::bundled_files() {
        let s = load_file(&f).expect("loads");
        let seed = s.default_seed();
        let mut r = run_scenario(&s, seed, RunOptions { keep_outcome: true, ..RunOptions::default() });
        let o = r.outcome.take().expect("kept");
        let header = history::header(&s.name, seed, &o, s.policy(), &s.require_plan());
        let mut text = Vec::new();
        history::write(&mut text, &header, &o).unwrap();
        let text = String::from_utf8(text).unwrap();
        let h = history::read(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(h.names.agents, o.names.agents, "{}", f.display());
        assert_eq!(h.events.len(), o.events.len(), "{}", f.display());
        // Written again, every event is the line it was read from.
        for (line, (a, b)) in text.lines().skip(1).zip(h.events.iter().zip(&o.events)) {
            assert_eq!(a.to_json(&h.names), b.to_json(&o.names), "{}: {line}", f.display());
        }
        let from_file = check_log(
            &Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop },
            &h.policy,
            &h.require_plan,
        );
        let from_run = check(&o, s.policy(), &s.require_plan());
        assert_eq!(from_file, from_run, "{}: the history is judged as the run was", f.display());
        judged += 1;
        broken += usize::from(!from_run.is_empty());
    }
    assert!(judged >= 40 && broken >= 5, "{judged} histories, {broken} with violations");
}

#[test]
fn a_history_that_cannot_be_read_names_the_line_and_the_reason() {
    const ID: &str = "e7adf5e3-55ea-46da-86fc-71e889a8080d";
    let header = r#"{"history":"handshake","format":1,"team":[{"name":"lead"},{"name":"alice"}]}"#;
    let ok = r#"{"t":0,"event":"status","agent":"alice","status":"idle"}"#;
    let cases = [
        ("".to_string(), 1, "the file is empty: there are no events to judge"),
        (" \n\n\t\n".to_string(), 1, "the file is empty"),
        (format!("{header}\n{ok}\nnot json\n"), 3, "not JSON"),
        // An editor's byte-order mark is named (a Claude Code user's review).
        (format!("\u{feff}{header}\n{ok}\n"), 1, "it starts with a byte-order mark (U+FEFF)"),
        (format!("{header}\n{ok}\n{{\"t\":1,\"event\":\"teleport\"}}\n"), 3, "not an event this program knows"),
        (format!("{header}\n{{\"t\":1,\"event\":\"status\",\"agent\":\"alice\",\"status\":\"asleep\"}}\n"), 2, "roster status"),
        (format!("{header}\n{{\"t\":1,\"event\":\"request\",\"request_id\":\"r-1\",\"kind\":\"plan\",\"from\":\"alice\",\"to\":\"lead\"}}\n"), 2, "not a request id"),
        (r#"{"history":"handshake","format":9}"#.to_string(), 1, "this program reads format 1"),
        (format!("{ok}\n{header}\n"), 2, "the header is the first line"),
        // A header alone passed as a history in which every invariant held.
        (format!("{header}\n"), 1, "a header and no event: there are no events to judge"),
        // A second header before any event replaced the first's team and policy.
        (format!("{header}\n{header}\n{ok}\n"), 2, "a second header (the first is line 1)"),
        ("{\"event\":\"status\"}".to_string(), 1, "needs \"t\""),
        // A review: an answer delivered but never sent passed as every invariant held.
        (
            format!(
                "{header}\n{{\"t\":1,\"event\":\"send\",\"seq\":1,\"from\":\"lead\",\"to\":\"alice\",\"type\":\"message\"}}\n\
                 {{\"t\":2,\"event\":\"deliver\",\"seq\":1,\"from\":\"lead\",\"to\":\"alice\",\"type\":\"message\"}}\n\
                 {{\"t\":3,\"event\":\"deliver\",\"seq\":2,\"from\":\"alice\",\"to\":\"lead\",\"type\":\"message\"}}\n"
            ),
            4,
            "delivers message #2, which no line before it sends",
        ),
        // A default of another protocol: a shutdown is killed or kept, never reassigned.
        (
            format!(
                "{header}\n{{\"t\":1,\"event\":\"request\",\"request_id\":\"{ID}\",\"kind\":\"shutdown\",\"from\":\"lead\",\"to\":\"alice\",\"deadline\":2}}\n\
                 {{\"t\":2,\"event\":\"expiry\",\"request_id\":\"{ID}\",\"kind\":\"shutdown\",\"default\":\"reassign\"}}\n"
            ),
            3,
            "\"reassign\" is not a shutdown timeout default (one of kill, keep)",
        ),
    ];
    for (text, line, why) in cases {
        let e = history::read(&text).expect_err(&text);
        assert_eq!(e.line, line, "{text}: {e}");
        assert!(e.reason.contains(why), "{text}: {e}");
    }
    // Without send lines at all, deliveries stand alone (no-silent-loss unknown).
    let delivered = r#"{"t":2,"event":"deliver","seq":7,"from":"lead","to":"alice","type":"message"}"#;
    assert!(history::read(&format!("{header}\n{delivered}\n")).is_ok());
    // Without a header the team is whoever the lines name, the lead first.
    let h = history::read(ok).unwrap();
    assert_eq!(h.names.agents, ["lead", "alice"]);
}

/// A validator for one part of docs/history.schema.json (a JSON pointer
/// into it), with the definitions it refers to.
fn validator(schema: &serde_json::Value, pointer: &str) -> jsonschema::Validator {
    let part =
        serde_json::json!({"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": format!("#{pointer}")});
    jsonschema::draft202012::new(&part).unwrap_or_else(|e| panic!("{pointer} compiles: {e}"))
}

/// Every way `v` breaks `validator`'s schema, one line each.
fn valid(validator: &jsonschema::Validator, v: &serde_json::Value) -> Result<(), String> {
    let broken: Vec<String> = validator.iter_errors(v).map(|e| format!("{}: {e}", e.instance_path())).collect();
    if broken.is_empty() {
        Ok(())
    } else {
        Err(broken.join("; "))
    }
}

#[test]
fn every_line_of_every_bundled_history_is_valid_by_the_published_schema() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/history.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
    let whole = jsonschema::draft202012::new(&schema).expect("the schema compiles");
    let header = validator(&schema, "/$defs/header");
    let events = schema["$defs"]["event"]["oneOf"].as_array().expect("one schema per event");
    // Each event's own schema, by its `event` name: a line is judged by the
    // one it claims to be, so that a failure says what is wrong with it.
    let by_kind: Vec<(String, jsonschema::Validator)> = events
        .iter()
        .enumerate()
        .map(|(k, x)| {
            let kind = x["properties"]["event"]["const"].as_str().expect("each event names itself").to_string();
            (kind, validator(&schema, &format!("/$defs/event/oneOf/{k}")))
        })
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    for f in common::bundled_files() {
        let s = load_file(&f).expect("loads");
        let mut r = run_scenario(&s, s.default_seed(), RunOptions { keep_outcome: true, ..RunOptions::default() });
        let o = r.outcome.take().expect("kept");
        let head = serde_json::to_value(history::header(&s.name, s.default_seed(), &o, s.policy(), &s.require_plan()))
            .expect("a header is JSON");
        valid(&header, &head).unwrap_or_else(|e| panic!("{}: the header: {e}", f.display()));
        assert!(whole.is_valid(&head), "{}: the header is a line of the schema", f.display());
        for e in &o.events {
            let line = e.to_json(&o.names);
            let kind = line["event"].as_str().unwrap().to_string();
            let (_, one) =
                by_kind.iter().find(|(k, _)| *k == kind).unwrap_or_else(|| panic!("the schema has no {kind:?} event"));
            valid(one, &line).unwrap_or_else(|err| panic!("{}: {line}: {err}", f.display()));
            // Exactly one of the schema's lines: not a header, not two events.
            assert!(whole.is_valid(&line), "{}: {line} is one line of the schema", f.display());
            seen.insert(kind);
        }
    }
    assert!(seen.len() >= 20, "the bundled runs write {} kinds of event: {seen:?}", seen.len());
}

/// docs/history.md's table: a history that logs only decisions (no send,
/// deliver, drop or fault lines) is judged the same for the invariants the
/// table says need no messages.
#[test]
fn a_history_without_its_messages_is_judged_the_same_for_what_needs_none() {
    use handshake::oracle::Invariant;
    let without = [
        Invariant::NoSilentLoss,
        Invariant::CurrentIncarnation,
        Invariant::ExpiryPolicy,
        Invariant::parse("single-holder").expect("task assignment's own"),
        Invariant::parse("work-in-assignment").expect("task assignment's own"),
    ];
    let mut compared = 0;
    for f in common::bundled_files() {
        let s = load_file(&f).expect("loads");
        let mut r = run_scenario(&s, s.default_seed(), RunOptions { keep_outcome: true, ..RunOptions::default() });
        let o = r.outcome.take().expect("kept");
        let header = history::header(&s.name, s.default_seed(), &o, s.policy(), &s.require_plan());
        let mut text = Vec::new();
        history::write(&mut text, &header, &o).unwrap();
        let kept: Vec<&str> = std::str::from_utf8(&text)
            .unwrap()
            .lines()
            .filter(|l| {
                !["\"send\"", "\"deliver\"", "\"drop\"", "\"fault\""]
                    .iter()
                    .any(|k| l.contains(&format!("\"event\":{k}")))
            })
            .collect();
        let h = history::read(&kept.join("\n")).unwrap();
        let judged = |v: Vec<handshake::oracle::Violation>| -> Vec<(Invariant, u64, String)> {
            v.into_iter().filter(|v| !without.contains(&v.invariant)).map(|v| (v.invariant, v.at.0, v.detail)).collect()
        };
        let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
        let thin = judged(check_log(&log, &h.policy, &h.require_plan));
        let whole = judged(check(&o, s.policy(), &s.require_plan()));
        assert_eq!(thin, whole, "{}", f.display());
        compared += 1;
    }
    assert!(compared >= 40);
}
