//! Issue 24, point 6: docs/report.schema.json describes every document the
//! program prints on stdout with `--format json`, and holds them: each
//! bundled scenario's run, a sweep and its shards merged, check (ok and
//! bad), explore, audit, bench (a case and a suite), fuzz, shrink, and the
//! error object. Validated by the `jsonschema` crate against the document's
//! own `$defs` entry (for a precise message) and against the whole schema
//! (each document is exactly one of its kinds). Their real times are
//! printed to the microsecond, as the schema says.

mod common;

use common::binary::{handshake, handshake_in, TempDir};
use serde_json::{json, Value};
use std::collections::BTreeSet;

const HAPPY: &str = "scenarios/01-happy-shutdown.toml";

fn schema() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/report.schema.json")).unwrap();
    serde_json::from_str(&text).expect("the schema is JSON")
}

/// The kinds of document the schema names, in its `oneOf`.
fn kinds(schema: &Value) -> Vec<String> {
    let refs = schema["oneOf"].as_array().expect("a oneOf of the documents");
    refs.iter().map(|r| r["$ref"].as_str().expect("a $ref").trim_start_matches("#/$defs/").to_string()).collect()
}

/// A validator for one `$defs` entry: the entry, with the definitions it refers to.
fn validator(schema: &Value, kind: &str) -> jsonschema::Validator {
    let one = json!({"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": format!("#/$defs/{kind}")});
    jsonschema::draft202012::new(&one).unwrap_or_else(|e| panic!("$defs/{kind} compiles: {e}"))
}

/// Every way `doc` breaks `$defs/kind`, one line each.
fn problems(schema: &Value, kind: &str, doc: &Value) -> Vec<String> {
    validator(schema, kind).iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

/// What the program printed for `args`, after checking the exit status.
fn document(dir: &std::path::Path, args: &[&str], code: i32) -> Value {
    let r = handshake_in(dir, args);
    r.expect_code(code);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", r.explain()))
}

#[test]
fn the_schemas_are_draft_2020_12_schemas() {
    for file in ["report.schema.json", "history.schema.json"] {
        let path = format!("{}/docs/{file}", env!("CARGO_MANIFEST_DIR"));
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema", "{file}");
        if let Err(e) = jsonschema::meta::validate(&schema) {
            panic!("{file} is not a valid schema: {e} at {}", e.instance_path());
        }
    }
}

#[test]
fn every_document_the_program_prints_is_valid_by_the_published_schema() {
    let schema = schema();
    let whole = jsonschema::draft202012::new(&schema).expect("the schema compiles");
    let root = common::binary::root();
    let dir = TempDir::new("report-schema");
    let scratch = |name: &str| dir.path(name);
    let off = dir.write(
        "pending-off.toml",
        "name = \"p\"\nabout = \"a\"\n[policy.defences]\npending_check = false\n[[teammate]]\nname = \"alice\"\n\
         [[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"\nlabel = \"stop-alice\"\n",
    );
    let auth_off = std::fs::read_to_string(root.join("scenarios/05-plan-approved.toml")).unwrap()
        + "\n[policy.defences]\nsender_auth = false\nsender_check = false\n";
    let auth_off = dir
        .write("auth-off.toml", &auth_off.replace("name = \"plan-approved\"", "name = \"plan-approved-defences-off\""));
    let bad = dir.write("bad.toml", "name = \"x\"\nabout = 3\n");
    let wrong = dir.write("wrong.toml", common::WRONG_EXPECTATION);
    let trace = scratch("run.jsonl");
    handshake(&["run", "scenarios/14-sender-auth-off.toml", "--trace", &trace]).expect_code(0);
    let inbox = root.join("tests/fixtures/reference/approval-flipped");
    let shard = |i: &str| {
        let out = scratch(&format!("shard-{i}.json"));
        let r = handshake(&["run", "scenarios", "--seeds", "1..4", "--shard", &format!("{i}/2"), "--format", "json"]);
        r.expect_code(0);
        std::fs::write(&out, &r.stdout).unwrap();
        out
    };
    let (one, two) = (shard("1"), shard("2"));
    let schedule = scratch("found.schedule");
    handshake(&["explore", "scenarios/12-kind-check-off.toml", "--save-schedule", &schedule]).expect_code(0);

    // Each document with what it was made to show, so that the schema is
    // held to the rich cases, not only the empty ones.
    type Shows = fn(&Value) -> bool;
    let any: Shows = |_| true;
    let r = root;
    let mut docs: Vec<(&str, String, Value, Shows)> = Vec::new();
    let mut add = |kind: &'static str, args: &[&str], code: i32, shows: Shows| {
        docs.push((kind, args.join(" "), document(r, args, code), shows));
    };
    add("run", &["run", "--format", "json"], 0, |d| {
        let runs = d["scenarios"].as_array().unwrap();
        runs.len() == common::bundled_files().len() && runs.iter().any(|s| s["deadlocks"][0].is_object())
    });
    add("run", &["run", &wrong, HAPPY, "--format", "json"], 1, |d| d["scenarios"][0]["failures"][0].is_object());
    let replay = ["run", "scenarios/12-kind-check-off.toml", "--schedule", &schedule, "--format", "json"];
    add("run", &replay, 0, |d| d["scenarios"][0]["expectations_judged"] == false);
    add("sweep", &["run", "scenarios", "--seeds", "1..3", "--format", "json"], 0, any);
    add("sweep", &["run", &wrong, "--seeds", "1..4", "--format", "json"], 1, |d| d["failed"][0].is_object());
    let twice = ["run", HAPPY, "--seeds", "1..5", "--shard", "2/2", "--check-determinism", "--format", "json"];
    add("sweep", &twice, 0, |d| d["determinism"].is_object() && d["shard"].is_object());
    add("sweep", &["merge", &one, &two, "--format", "json"], 0, any);
    add("check", &["check", "--format", "json"], 0, any);
    add("check", &["check", &bad, HAPPY, "--format", "json"], 2, |d| d["files"][0]["errors"][0].is_object());
    add("explore", &["explore", HAPPY, "--format", "json"], 0, any);
    add("explore", &["explore", &off, "--duplicate", "1", "--format", "json"], 1, |d| d["violation"].is_object());
    add("explore", &["explore", "scenarios/14-sender-auth-off.toml", "--compare", "--format", "json"], 0, |d| {
        d["expected_violations"][0].is_object() && d["partial_order_factor_states"].is_number()
    });
    add("explore", &["explore", "scenarios/22-peer-deadlock.toml", "--max-states", "5", "--format", "json"], 3, |d| {
        d["deadlock"].is_object() && d["stopped_by"] == "max-states"
    });
    add("audit", &["audit", &trace, "--format", "json"], 1, |d| d["violations"][0]["line"].is_number());
    add("audit", &["audit", inbox.to_str().unwrap(), "--format", "json"], 1, |d| {
        d["violations"][0]["file"].is_string()
    });
    let team = "tests/fixtures/claude-code/45874-leftover-shutdown-kills-respawn";
    add("audit", &["audit", team, "--format", "json"], 1, |d| {
        d["violations"][1]["witness"].as_array().is_some_and(|w| w.len() == 3)
            && d["generation"].is_string()
            && d["invariants"].as_array().is_some_and(|l| l.iter().any(|i| i["verdict"] == "unknown"))
    });
    let small = ["--handshakes", "200", "--latency-sample", "20", "--repeat", "1", "--format", "json"];
    // Each figure with its spread over the repeats, and the build's profile (issue 44, point 4).
    let three = ["--handshakes", "200", "--latency-sample", "20", "--repeat", "3", "--format", "json"];
    add("bench", &[&["bench"], &three[..]].concat(), 0, |d| {
        let s = &d["spread"];
        let ordered = |f: &serde_json::Value| {
            f["min"].as_f64() <= f["median"].as_f64() && f["median"].as_f64() <= f["max"].as_f64()
        };
        s["runs"] == 3
            && ordered(&s["protocol_per_second"])
            && ordered(&s["ratio"])
            && s["ratio"]["median"] == d["ratio"]
            && d["profile"].as_str().is_some_and(|p| !p.is_empty())
    });
    add("bench", &[&["bench", "--mailbox", "file"], &small[..]].concat(), 0, any);
    add("bench", &[&["bench", "--protocol", "plan", "--teammates", "3"], &small[..]].concat(), 0, |d| {
        d["handshake"] == "plan" && d["handshakes"] == 200
    });
    let suite =
        ["bench", "--suite", "--cases", "1x1x200", "--latency-sample", "20", "--repeat", "1", "--format", "json"];
    add("bench_suite", &suite, 0, any);
    add("fuzz", &["fuzz", HAPPY, "--seeds", "1..4", "--out", &scratch("finds-none"), "--format", "json"], 0, any);
    let finds = scratch("finds");
    // About one seed in twenty finds here; 1..40 held a single find, which a
    // change in the order of the fuzzer's draws took away. 200 seeds keep a
    // find whatever the draws (8 today) and take a tenth of a second.
    let fuzz = [
        "fuzz",
        &auth_off,
        "--seeds",
        "1..200",
        "--shrink",
        "--out",
        &finds,
        "--format",
        "json",
        "--count-defences-off",
    ];
    add("fuzz", &fuzz, 1, |d| d["found"][0]["shrunk"]["Ok"].is_string());
    // Without --count-defences-off, what only the file's own switched-off
    // defence lets through is shown, not counted (issue 39, point 7).
    let seen = ["fuzz", &auth_off, "--seeds", "1..200", "--out", &scratch("finds-seen"), "--format", "json"];
    add("fuzz", &seen, 0, |d| d["only_without_a_defence"][0]["ran_without"][0].is_string());
    let shrunk = scratch("shrunk.toml");
    let shrink = ["shrink", "tests/shrink-inputs/padded-sender-auth-off.toml", "--out", &shrunk, "--format", "json"];
    add("shrink", &shrink, 0, any);
    add("error", &["run", &bad, "--format", "json"], 2, |d| d["error"]["errors"][0]["line"] == 2);
    add("error", &["run", "--seeds", "5..1", "--format", "json"], 2, |d| d["error"]["errors"][0]["flag"] == "--seeds");
    add("error", &["explore", HAPPY, "--max-states", "0", "--format", "json"], 2, any);
    add("error", &["audit", &bad, "--format", "json"], 2, any);

    let mut seen = BTreeSet::new();
    for (kind, args, doc, shows) in &docs {
        let broken = problems(&schema, kind, doc);
        assert!(broken.is_empty(), "handshake {args}: not a valid {kind} document:\n  {}", broken.join("\n  "));
        let matches: Vec<String> =
            kinds(&schema).into_iter().filter(|k| problems(&schema, k, doc).is_empty()).collect();
        assert_eq!(matches, [kind.to_string()], "handshake {args}: valid as exactly one kind of document");
        assert!(whole.is_valid(doc), "handshake {args}: valid by the whole schema");
        assert!(shows(doc), "handshake {args}: does not show what it was run to show:\n{doc:#}");
        seen.insert(kind.to_string());
    }
    assert_eq!(seen, kinds(&schema).into_iter().collect(), "every kind the schema names is printed and checked");
}

#[test]
fn a_document_that_drifts_from_the_schema_is_refused() {
    let schema = schema();
    let r = handshake(&["run", HAPPY, "--format", "json"]);
    let doc: Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert!(problems(&schema, "run", &doc).is_empty());
    type Drift = fn(&mut Value);
    let drifts: [(&str, Drift); 5] = [
        ("a field of another type", |d| d["scenarios"][0]["real_ms"] = json!("0.3 ms")),
        ("a field added", |d| d["scenarios"][0]["colour"] = json!("green")),
        ("a field gone", |d| drop(d["scenarios"][0].as_object_mut().unwrap().remove("roster"))),
        ("a status the program has no word for", |d| d["scenarios"][0]["requests"][0]["status"] = json!("done")),
        ("a line counted from 0", |d| {
            *d = json!({"error": {"kind": "bad_input", "message": "m", "errors": [
            {"message": "m", "path": "a.toml", "line": 0, "column": 1, "label": null, "help": null, "flag": null}]}})
        }),
    ];
    for (what, drift) in drifts {
        let mut changed = doc.clone();
        drift(&mut changed);
        let kind = if changed.get("error").is_some() { "error" } else { "run" };
        assert!(!problems(&schema, kind, &changed).is_empty(), "{what}: the schema should refuse it");
        assert!(!jsonschema::draft202012::new(&schema).unwrap().is_valid(&changed), "{what}");
    }
}

/// Digits after the point that a number, as JSON prints it, carries:
/// `0.583` 3, `7.0` 0, `1.5e-5` 6 (ryu writes small numbers with an exponent).
fn decimals(number: &str) -> i64 {
    let (mantissa, exponent) = match number.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or_else(|_| panic!("an exponent: {number}"))),
        None => (number, 0),
    };
    let fraction = mantissa.split_once('.').map_or("", |(_, f)| f).trim_end_matches('0');
    (fraction.len() as i64 - exponent).max(0)
}

#[test]
fn decimals_are_counted_as_printed() {
    assert_eq!(decimals("0.5830649999999999"), 16);
    assert_eq!(decimals("0.583"), 3);
    assert_eq!(decimals("7.0"), 0);
    assert_eq!(decimals("12"), 0);
    assert_eq!(decimals("1e-6"), 6);
    assert_eq!(decimals("1.5e-6"), 7);
}

/// Issue 24, point 6: every real time in every report is printed to the
/// microsecond (ms to 3 decimals, seconds to 6), never with the clock's float
/// noise. Read in the printed text: a parsed number says nothing of how it
/// was written.
#[test]
fn every_real_time_in_a_json_report_is_rounded_to_the_microsecond() {
    const PLAN: &str = "scenarios/05-plan-approved.toml";
    let dir = TempDir::new("rounded-times");
    // Fifty seeds of two files: enough runs that the real times added up
    // carry float noise when printed whole.
    let shard = |i: u32| {
        let shard = format!("{i}/2");
        let r = handshake(&["run", HAPPY, PLAN, "--seeds", "1..50", "--shard", &shard, "--format", "json"]);
        r.expect_code(0);
        dir.write(&format!("shard-{i}.json"), &r.stdout)
    };
    let (one, other) = (shard(1), shard(2));
    let out = dir.path("finds");
    let commands: [(&[&str], &[&str]); 6] = [
        (&["run", HAPPY, "--format", "json"], &["real_ms"]),
        (&["run", HAPPY, PLAN, "--seeds", "1..50", "--format", "json"], &["real_seconds", "real_ms"]),
        (&["merge", &one, &other, "--format", "json"], &["real_seconds", "real_ms"]),
        (&["fuzz", HAPPY, "--seeds", "1..4", "--out", &out, "--format", "json"], &["real_seconds"]),
        (
            &["shrink", "tests/shrink-inputs/padded-sender-auth-off.toml", "--out", "-", "--format", "json"],
            &["real_seconds"],
        ),
        (&["explore", HAPPY, "--format", "json"], &["seconds"]),
    ];
    for (args, keys) in commands {
        let r = handshake(args);
        r.expect_code(0);
        let mut found = BTreeSet::new();
        for line in r.stdout.lines() {
            let Some((key, value)) = line.trim().split_once(": ") else { continue };
            let key = key.trim_matches('"');
            let allowed = match key {
                "real_ms" => 3,
                "real_seconds" | "seconds" => 6,
                _ => continue,
            };
            let number = value.trim_end_matches(',');
            assert!(
                decimals(number) <= allowed,
                "handshake {}: {key} is {number}, more than {allowed} decimals",
                args.join(" ")
            );
            found.insert(key);
        }
        assert_eq!(found, keys.iter().copied().collect(), "handshake {}: the time fields printed", args.join(" "));
    }
}
