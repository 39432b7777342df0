//! Issue 24, point 6: bad input told to machines. With `--format json`,
//! every command that has it prints one document on stdout when it refuses
//! its input, the error object of docs/json.md, with exit 2; stderr says
//! word for word what it says without `--format json`. `check --format
//! json` lists each file, ok or bad with its problems in the same shape.

mod common;

use common::binary::{handshake, TempDir};
use serde_json::Value;

const HAPPY: &str = "scenarios/01-happy-shutdown.toml";

/// Two problems: a value of the wrong type, and an action typo.
const BAD: &str = "name = \"x\"\nabout = 3\n[[teammate]]\nname = \"alice\"\n\
                   [[step]]\nat = \"1s\"\ndo = \"shutdwon\"\nto = \"alice\"\n";

/// The error object `args` prints with `--format json`, after checking the
/// refusal: exit 2 either way, nothing on stdout without json, one JSON
/// document with it, and the same stderr in both.
fn refusal(args: &[&str]) -> Value {
    let text = handshake(args);
    text.expect_code(2);
    assert_eq!(text.stdout, "", "a refusal prints no report\n{}", text.explain());
    let json = handshake(&[args, &["--format", "json"]].concat());
    json.expect_code(2);
    assert_eq!(json.stderr, text.stderr, "stderr says the same in either format\n{}", json.explain());
    // One document: a second one, or text after it, would not parse.
    let doc: Value = serde_json::from_str(&json.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", json.explain()));
    let error = &doc["error"];
    assert_eq!(error["kind"], "bad_input", "{doc:#}");
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{doc:#}");
    let errors = error["errors"].as_array().unwrap_or_else(|| panic!("no errors: {doc:#}"));
    assert!(!errors.is_empty(), "{doc:#}");
    for e in errors {
        for key in ["message", "path", "line", "column", "label", "help", "flag"] {
            assert!(e.get(key).is_some(), "every problem has {key:?}, null if unknown: {e:#}");
        }
    }
    assert_eq!(doc.as_object().map(|o| o.len()), Some(1), "the object is all the document holds: {doc:#}");
    error.clone()
}

#[test]
fn every_command_with_format_json_tells_bad_input_as_the_error_object() {
    let dir = TempDir::new("json-errors");
    let not_json = dir.write("notes.txt", "not json\n");
    let nowhere = dir.path("no-folder/out.toml");
    // (command, the flag or the path its first problem names)
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (vec!["run", "no-such.toml"], "path", "no-such.toml"),
        (vec!["run", "--seeds", "1..3", "--jobs", "0"], "flag", "--jobs"),
        (vec!["run", HAPPY, "--events", "protocol"], "flag", "--events"),
        (vec!["run", HAPPY, "--seeds", "1..3", "-v"], "flag", "--verbose"),
        (vec!["run", HAPPY, "--schedule", &not_json], "path", &not_json),
        (vec!["run", HAPPY, "--trace", &nowhere], "flag", "--trace"),
        (vec!["run", HAPPY, "--html", &nowhere, "--compare", "no_such_key=1"], "flag", "--compare"),
        (
            vec!["run", HAPPY, "--seeds", "1..3", "--shard-from-env", "HANDSHAKE_TEST_UNSET/3"],
            "flag",
            "--shard-from-env",
        ),
        (vec!["check", "no-such.toml"], "path", "no-such.toml"),
        (vec!["explore", HAPPY, "--max-states", "0"], "flag", "--max-states"),
        (vec!["explore", HAPPY, "--write", &nowhere], "flag", "--write"),
        (vec!["explore", "no-such.toml"], "path", "no-such.toml"),
        (vec!["shrink", HAPPY, "--out", "-"], "path", HAPPY),
        (vec!["shrink", HAPPY, "--out", &nowhere], "flag", "--out"),
        (vec!["fuzz", HAPPY, "--seeds", "1..2", "--jobs", "0", "--out", &nowhere], "flag", "--jobs"),
        (vec!["fuzz", "no-such.toml"], "path", "no-such.toml"),
        (vec!["audit", &not_json], "path", &not_json),
        (vec!["audit", "no-such.jsonl"], "path", "no-such.jsonl"),
        (vec!["merge", &not_json], "path", &not_json),
        (vec!["bench", "--in-flight", "0"], "flag", "--in-flight"),
    ];
    for (args, key, names) in &cases {
        let error = refusal(args);
        assert_eq!(error["errors"][0][key], *names, "{}: {error:#}", args.join(" "));
    }
    // An unreadable history names the line that cannot be read.
    assert_eq!(refusal(&["audit", &not_json])["errors"][0]["line"], 1);
}

#[test]
fn a_bad_scenario_file_is_every_problem_with_its_place_the_same_in_every_command() {
    let dir = TempDir::new("json-bad-file");
    let bad = dir.write("bad.toml", BAD);
    let run = refusal(&["run", &bad]);
    let errors = &run["errors"];
    assert_eq!(errors.as_array().map(Vec::len), Some(2), "{run:#}");
    let first = &errors[0];
    assert_eq!(
        (&first["path"], &first["line"], &first["column"], &first["flag"]),
        (&Value::from(bad.as_str()), &Value::from(2), &Value::from(9), &Value::Null),
        "{run:#}"
    );
    assert!(first["message"].as_str().is_some_and(|m| m.contains("`about`")), "{run:#}");
    assert_eq!(first["label"], "found a whole number", "{run:#}");
    let typo = &errors[1];
    assert_eq!((&typo["line"], &typo["column"]), (&Value::from(7), &Value::from(6)), "{run:#}");
    assert!(typo["help"].as_str().is_some_and(|h| h.contains("did you mean `shutdown`")), "{run:#}");
    assert_eq!(run["message"], "2 problems in 1 file; nothing was run");
    for command in ["explore", "shrink", "fuzz"] {
        let other = refusal(&[command, &bad]);
        assert_eq!(other["errors"], run["errors"], "{command} tells the same problems as run");
    }
    // A file among good ones: the good ones are not run either.
    let among = refusal(&["run", HAPPY, &bad]);
    assert_eq!(among["errors"], run["errors"]);
}

#[test]
fn what_clap_refuses_is_the_error_object_too_when_json_is_asked() {
    let empty = refusal(&["run", "--seeds", "5..1"]);
    assert_eq!(empty["errors"][0]["flag"], "--seeds", "{empty:#}");
    assert!(
        empty["errors"][0]["message"].as_str().is_some_and(|m| m.contains("runs backwards") && m.contains("like 1..6")),
        "{empty:#}"
    );
    let typo = refusal(&["run", "--sed", "3"]);
    assert_eq!(typo["errors"][0]["flag"], "--sed", "{typo:#}");
    assert!(typo["errors"][0]["help"].as_str().is_some_and(|h| h.contains("'--seed'")), "{typo:#}");
    refusal(&["explore", HAPPY, "--drop", "lots"]);
    // `--format=json` asks as well; a word after `--` does not.
    let r = handshake(&["run", "--seeds", "5..1", "--format=json"]);
    r.expect_code(2);
    assert!(serde_json::from_str::<Value>(&r.stdout).is_ok(), "{}", r.explain());
    let r = handshake(&["run", "--seeds", "5..1", "--", "--format", "json"]);
    r.expect_code(2);
    assert_eq!(r.stdout, "", "{}", r.explain());
    // --help is not an error, whatever the format.
    let help = handshake(&["run", "--help", "--format", "json"]);
    help.expect_code(0).stdout_has("Usage:");
}

#[test]
fn check_format_json_lists_each_file_ok_or_bad_with_its_problems() {
    let dir = TempDir::new("json-check");
    let bad = dir.write("bad.toml", BAD);
    let text = handshake(&["check", &bad, HAPPY]);
    let r = handshake(&["check", &bad, HAPPY, "--format", "json"]);
    r.expect_code(2);
    assert_eq!(r.stderr, text.stderr, "the problems on stderr, as in text");
    let doc: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", r.explain()));
    let files = doc["files"].as_array().expect("files");
    assert_eq!(files.len(), 2, "{doc:#}");
    assert_eq!(
        (&files[0]["path"], &files[0]["ok"], &files[0]["name"]),
        (&Value::from(bad.as_str()), &Value::from(false), &Value::Null)
    );
    // The same problems, in the same shape, as run's error object.
    assert_eq!(files[0]["errors"], refusal(&["run", &bad])["errors"], "{doc:#}");
    assert_eq!(
        (&files[1]["path"], &files[1]["ok"], &files[1]["name"]),
        (&Value::from(HAPPY), &Value::from(true), &Value::from("happy-shutdown"))
    );
    assert_eq!(files[1]["errors"], Value::Array(vec![]));
    assert_eq!(doc["summary"], serde_json::json!({"total": 2, "ok": 1, "bad": 1}));

    let all = handshake(&["check", "--format", "json"]);
    all.expect_code(0);
    let doc: Value = serde_json::from_str(&all.stdout).expect("JSON");
    let bundled = common::bundled_files().len();
    assert_eq!(doc["summary"], serde_json::json!({"total": bundled, "ok": bundled, "bad": 0}), "{}", all.explain());
    // Text as it was: the good files, then the count.
    handshake(&["check", &bad, HAPPY])
        .expect_code(2)
        .stdout_has("ok    scenarios/01-happy-shutdown.toml")
        .stdout_has("2 files: 1 ok, 1 bad");
}

/// A hostile review: an output that could not be written (`--svg
/// /dev/full`) left `--format json` with nothing on stdout, and stderr said
/// "the run's verdict is above". The error object, and stderr says the run
/// was played.
#[cfg(target_os = "linux")]
#[test]
fn an_output_that_cannot_be_written_is_the_error_object_with_json() {
    let json = handshake(&["run", HAPPY, "--svg", "/dev/full", "--format", "json"]);
    json.expect_code(2);
    let doc: Value = serde_json::from_str(&json.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", json.explain()));
    assert_eq!(doc["error"]["kind"], "bad_input", "{doc:#}");
    assert!(doc["error"]["message"].as_str().is_some_and(|m| m.contains("--svg")), "{doc:#}");
    assert!(json.stderr.contains("none of its outputs was written"), "{}", json.explain());
    assert!(!json.stderr.contains("verdict is above"), "{}", json.explain());
}

/// A hostile review: `--trace /dev/stdout --format json` (or an explore's
/// `--save-schedule /dev/stdout`) wrote the trace into the JSON report's
/// stream, which then no JSON reader took. Refused, as an output naming
/// another output is; in text, and with stdout sent nowhere, it is allowed.
#[cfg(unix)]
#[test]
fn an_output_on_stdout_beside_the_json_report_is_refused() {
    for args in [
        vec!["run", HAPPY, "--trace", "/dev/stdout", "--format", "json"],
        vec!["explore", HAPPY, "--save-schedule", "/dev/stdout", "--format", "json"],
    ] {
        let r = handshake(&args);
        r.expect_code(2);
        let doc: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", r.explain()));
        let message = doc["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("is stdout, where the JSON report goes"), "{message}");
    }
    handshake(&["run", HAPPY, "--trace", "/dev/stdout"]).expect_code(0).stdout_has("\"event\":");
}
