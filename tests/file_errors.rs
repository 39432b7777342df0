//! How a scenario file is refused: in the file's own words, every problem in
//! one pass, with bounds on what a file may ask for, and durations written the
//! way people write them. (Issue 9, points 7, 10, 15, 17, 18 and 20.)

mod common;

use handshake::scenario::{load_str, ScenarioError};

const HEAD: &str = "name = \"x\"\nabout = \"y\"\n";
const ALICE: &str = "[[teammate]]\nname = \"alice\"\n";

/// Every error of a file that must be refused.
fn errors(src: &str) -> Vec<ScenarioError> {
    match load_str("x.toml", src) {
        Ok(_) => panic!("should be refused:\n{src}"),
        Err(errors) => errors,
    }
}

/// The first error of `HEAD + body`, as `(line, col, message)`.
fn refuse(body: &str) -> (usize, usize, String) {
    let e = &errors(&format!("{HEAD}{body}"))[0];
    (e.line, e.col, e.text())
}

/// The 1-based line and column of the first `marker` in `src`.
fn pos(src: &str, marker: &str) -> (usize, usize) {
    let at = src.find(marker).unwrap_or_else(|| panic!("{marker:?} not in the file"));
    let line = src[..at].matches('\n').count() + 1;
    let col = src[..at].rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn all(errors: &[ScenarioError]) -> String {
    errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")
}

// ------------------------------------------------------------ 7: resource bombs

#[test]
fn steps_past_the_bound_are_refused_and_the_bound_is_named() {
    let src = format!("{HEAD}{ALICE}work = [{{ write = \"a\", steps = 4294967295, step_time = \"0ms\" }}]\n");
    let e = errors(&src);
    assert_eq!((e[0].line, e[0].col), pos(&src, "4294967295"), "{}", all(&e));
    assert!(e[0].message.contains("steps") && e[0].message.contains("1000000"), "{}", e[0].message);
}

#[test]
fn max_revisions_past_the_bound_is_refused_and_the_bound_is_named() {
    let src = format!("{HEAD}{ALICE}max_revisions = 4294967295\n");
    let e = errors(&src);
    assert_eq!((e[0].line, e[0].col), pos(&src, "4294967295"), "{}", all(&e));
    assert!(e[0].message.contains("max_revisions") && e[0].message.contains("1000"), "{}", e[0].message);
}

#[test]
fn asking_again_past_the_bound_or_below_zero_is_refused_at_its_place() {
    for bad in ["101", "-1", "\"once\""] {
        let src = format!("{HEAD}[lead]\nask_again_on_reject = {bad}\n{ALICE}");
        let e = errors(&src);
        assert_eq!((e[0].line, e[0].col), pos(&src, bad), "{}", all(&e));
        assert!(e[0].message.contains("ask_again_on_reject"), "{}", e[0].message);
    }
    let src = format!("{HEAD}[lead]\nask_again_on_reject = 101\n{ALICE}");
    assert!(errors(&src)[0].message.contains("100"), "the bound is named: {}", all(&errors(&src)));
}

#[test]
fn a_number_too_big_for_any_bound_is_refused_in_words() {
    let (_, _, msg) = refuse(&format!("{ALICE}max_revisions = 99999999999999999999\n"));
    assert!(msg.contains("max_revisions"), "{msg}");
}

#[test]
fn a_team_larger_than_the_bound_is_refused_even_when_made_by_count() {
    let src = format!("{HEAD}[[teammate]]\nname = \"a\"\ncount = 60000\n[[teammate]]\nname = \"b\"\ncount = 60000\n");
    let e = errors(&src);
    assert_eq!(e[0].line, pos(&src, "name = \"b\"").0, "{}", all(&e));
    assert!(e[0].message.contains("100000"), "{}", e[0].message);
}

#[test]
fn the_work_of_the_whole_team_is_bounded() {
    // Each item is within its own bound; together they are not.
    let src = format!("{HEAD}[[teammate]]\nname = \"w\"\ncount = 1000\nwork = [{{ write = \"a\", steps = 5000 }}]\n");
    let e = errors(&src);
    assert!(e[0].message.contains("1000000"), "{}", all(&e));
}

#[test]
fn too_many_expectations_are_refused_at_the_first_one_past_the_bound() {
    let mut src = String::from(HEAD);
    for _ in 0..100_001 {
        src.push_str("[[expect]]\nexpired = 0\n");
    }
    let e = errors(&src);
    assert_eq!(e.len(), 1, "one error for the bound, not one per entry:\n{}", all(&e[..3.min(e.len())]));
    let last = src.rfind("[[expect]]").unwrap();
    assert_eq!(e[0].line, src[..last].matches('\n').count() + 1);
    assert!(e[0].message.contains("100000"), "{}", e[0].message);
}

#[test]
fn a_file_larger_than_the_bound_is_refused_before_it_is_parsed() {
    let dir = std::env::temp_dir().join(format!("handshake-file-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("huge.toml");
    let mut src = String::from(HEAD);
    src.push_str(&"# padding\n".repeat(5 * 1024 * 1024 / 10));
    std::fs::write(&path, &src).unwrap();
    let e = handshake::scenario::load_file(&path).expect_err("a 5 MiB file is refused");
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(e.len(), 1);
    assert!(e[0].message.contains("4 MiB"), "{}", e[0]);
}

#[test]
fn every_bad_reference_of_a_large_file_is_reported_at_its_own_line() {
    let mut src = format!("{HEAD}{ALICE}");
    for i in 0..20_000 {
        src.push_str(&format!("[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"nobody{i}\"\n"));
    }
    let e = errors(&src);
    assert_eq!(e.len(), 20_000);
    assert_eq!((e[19_999].line, e[19_999].col), pos(&src, "\"nobody19999\""));
    assert!(e[19_999].message.contains("nobody19999"), "{}", e[19_999]);
}

#[test]
fn an_error_names_a_large_team_in_a_bounded_line() {
    // Listing 100,000 names in each of 1,000 errors would be a bomb of its own.
    let mut src = format!("{HEAD}[[teammate]]\nname = \"w\"\ncount = 100000\n");
    for _ in 0..1000 {
        src.push_str("[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"nobody\"\n");
    }
    let e = errors(&src);
    assert_eq!(e.len(), 1000);
    assert!(e.iter().all(|e| e.text().len() < 400), "{}", e[0]);
    assert!(e[0].text().contains("100001 agents"), "{}", e[0]);
}

/// A hostile review: 200 steps to a group of 100,000 asked for 20 million
/// steps, and the check died allocating 11 GB, from a 10 KB file. The
/// copies a group makes are bounded, said once at the table that passes.
#[test]
fn the_copies_groups_make_are_bounded() {
    let team = format!("{HEAD}[[teammate]]\nname = \"w\"\ncount = 100000\n");
    let mut src = team.clone();
    for _ in 0..200 {
        src.push_str("[[step]]\nat = \"1s\"\ndo = \"message\"\nto = \"w-*\"\ntext = \"hi\"\n");
    }
    let e = errors(&src);
    assert_eq!(e.len(), 1, "{}", all(&e));
    assert!(e[0].message.contains("at most 200000"), "{}", e[0]);
    let third = src.match_indices("\"w-*\"").nth(2).map(|(i, _)| i).expect("three groups");
    assert_eq!(e[0].line, src[..third].matches('\n').count() + 1, "the third table passes it: {}", e[0]);
    let mut src = team;
    for _ in 0..3 {
        src.push_str("[[expect]]\nteammate = \"w-*\"\nstatus = \"idle\"\n");
    }
    let e = errors(&src);
    assert!(e.len() == 1 && e[0].message.starts_with("the expectations groups make"), "{}", all(&e));
}

// ------------------------------------------------------------ 10: names and case

#[test]
fn teammate_names_differing_only_in_case_are_refused() {
    let src = format!("{HEAD}{ALICE}[[teammate]]\nname = \"Alice\"\n");
    let e = errors(&src);
    assert_eq!((e[0].line, e[0].col), pos(&src, "\"Alice\""), "{}", all(&e));
    assert!(e[0].message.contains("alice") && e[0].message.contains("Alice"), "{}", e[0]);
    assert!(e[0].message.contains("case"), "{}", e[0]);
}

#[test]
fn a_counted_name_differing_only_in_case_is_refused() {
    let src = format!("{HEAD}[[teammate]]\nname = \"w\"\ncount = 3\n[[teammate]]\nname = \"W-2\"\n");
    let e = errors(&src);
    assert_eq!((e[0].line, e[0].col), pos(&src, "\"W-2\""), "{}", all(&e));
    assert!(e[0].message.contains("case"), "{}", e[0]);
}

// ------------------------------------------------------------ 15: zero that means nothing

#[test]
fn a_zero_timeout_is_refused_with_the_reason() {
    for key in ["shutdown_timeout", "plan_timeout"] {
        let src = format!("{HEAD}[policy]\n{key} = \"0s\"\n");
        let e = errors(&src);
        assert_eq!((e[0].line, e[0].col), pos(&src, "\"0s\""), "{}", all(&e));
        assert!(e[0].message.contains(key) && e[0].message.contains("expire"), "{}", e[0]);
    }
}

// ------------------------------------------------------------ 17: the file's language

/// Words that belong to the program's source, not to the file.
const RUST_WORDS: &[&str] = &[
    "FileDoc",
    "PolicyDoc",
    "AnswersDoc",
    "LeadDoc",
    "TeammateDoc",
    "WorkDoc",
    "StepDoc",
    "FaultDoc",
    "ExpectDoc",
    "OneOrMany",
    "Defences",
    "Answer",
    "OnShutdownTimeout",
    "OnPlanTimeout",
    "Message",
    "RequestId",
    "Text",
    "Spanned",
    "untagged",
    "variant of",
    "expected struct",
    "struct ",
    "enum ",
    "Option",
    "Vec<",
    "u32",
    "u64",
    "i64",
    "f64",
    "usize",
    "sequence",
    " map",
];

/// `(where, key = wrong value)`: every key of the format, each with a value
/// of the wrong type or outside what the key allows.
const WRONG: &[(&str, &str)] = &[
    ("", "name = 1"),
    ("", "about = 1"),
    ("", "seed = \"x\""),
    ("", "seed = -1"),
    ("", "end = 5"),
    ("", "cap = true"),
    ("", "nope = 1"),
    ("", "policy = 1"),
    ("", "lead = 1"),
    ("", "teammate = 1"),
    ("", "teammate = [1]"),
    ("", "step = \"x\""),
    ("", "fault = 1"),
    ("", "expect = 3"),
    ("[policy]", "shutdown_timeout = 1"),
    ("[policy]", "plan_timeout = []"),
    ("[policy]", "on_shutdown_timeout = \"maybe\""),
    ("[policy]", "on_shutdown_timeout = 1"),
    ("[policy]", "on_plan_timeout = \"x\""),
    ("[policy]", "strict_hierarchy = \"yes\""),
    ("[policy]", "latency = 5"),
    ("[policy]", "defences = 1"),
    ("[policy]", "timeouts = \"off\""),
    ("[policy]", "deadlocks = \"maybe\""),
    ("[policy]", "deadlocks = 1"),
    ("[policy]", "shutdown_timeout = \"forever\""),
    ("[policy]", "nope = 1"),
    ("[policy.defences]", "kind_check = \"no\""),
    ("[policy.defences]", "nope = true"),
    ("[lead]", "on_plan = \"maybe\""),
    ("[lead]", "on_plan = [1]"),
    ("[lead]", "on_plan = 3"),
    ("[lead]", "feedback = 1"),
    ("[lead]", "nope = 1"),
    ("[[teammate]]", "name = 1"),
    ("[[teammate]]\nname = \"bob\"", "on_shutdown = \"maybe\""),
    ("[[teammate]]\nname = \"bob\"", "on_shutdown = [\"approve\", 3]"),
    ("[[teammate]]\nname = \"bob\"", "on_shutdown = {}"),
    ("[[teammate]]\nname = \"bob\"", "reject_reason = 1"),
    ("[[teammate]]\nname = \"bob\"", "on_plan = \"x\""),
    ("[[teammate]]\nname = \"bob\"", "require_plan = \"yes\""),
    ("[[teammate]]\nname = \"bob\"", "plan = 1"),
    ("[[teammate]]\nname = \"bob\"", "work = \"x\""),
    ("[[teammate]]\nname = \"bob\"", "work = [\"write a\"]"),
    ("[[teammate]]\nname = \"bob\"", "work = [{ write = 1 }]"),
    ("[[teammate]]\nname = \"bob\"", "work = [{ write = \"a\", steps = \"4\" }]"),
    ("[[teammate]]\nname = \"bob\"", "work = [{ write = \"a\", steps = -1 }]"),
    ("[[teammate]]\nname = \"bob\"", "work = [{ write = \"a\", step_time = 5 }]"),
    ("[[teammate]]\nname = \"bob\"", "work = [{ write = \"a\", nope = 1 }]"),
    ("[[teammate]]\nname = \"bob\"", "max_revisions = \"3\""),
    ("[[teammate]]\nname = \"bob\"", "max_revisions = -1"),
    ("[[teammate]]\nname = \"bob\"", "count = \"3\""),
    ("[[teammate]]\nname = \"bob\"", "count = 1.5"),
    ("[[teammate]]\nname = \"bob\"", "nope = 1"),
    ("[[step]]\ndo = \"shutdown\"\nto = \"alice\"", "at = 1"),
    ("[[step]]\nat = \"1s\"\nto = \"alice\"", "do = 1"),
    ("[[step]]\nat = \"1s\"\nto = \"alice\"", "do = \"stop\""),
    ("[[step]]\nat = \"1s\"\ndo = \"shutdown\"", "to = 1"),
    ("[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"", "from = []"),
    ("[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"", "label = 1"),
    ("[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"", "reason = 1"),
    ("[[step]]\nat = \"1s\"\ndo = \"submit_plan\"\nfrom = \"alice\"", "plan = 1"),
    ("[[step]]\nat = \"1s\"\ndo = \"message\"\nto = \"alice\"", "text = 1"),
    ("[[step]]\nat = \"1s\"\ndo = \"message\"\nto = \"alice\"", "nope = 1"),
    ("[[fault]]", "kind = 1"),
    ("[[fault]]", "kind = \"x\""),
    ("[[fault]]\nkind = \"drop\"", "at = 1"),
    ("[[fault]]\nkind = \"drop\"", "until = 1"),
    ("[[fault]]\nkind = \"crash\"\nat = \"1s\"", "agent = 1"),
    ("[[fault]]\nkind = \"drop\"", "from = 1"),
    ("[[fault]]\nkind = \"drop\"", "to = 1"),
    ("[[fault]]\nkind = \"drop\"", "type = 1"),
    ("[[fault]]\nkind = \"drop\"", "type = [1]"),
    ("[[fault]]\nkind = \"drop\"", "request = 1"),
    ("[[fault]]\nkind = \"delay\"", "delay = 1"),
    ("[[fault]]\nkind = \"drop\"", "count = \"x\""),
    ("[[fault]]\nkind = \"drop\"", "probability = \"x\""),
    ("[[fault]]\nkind = \"crash\"\nat = \"1s\"\nagent = \"alice\"", "restart = 1"),
    ("[[fault]]\nkind = \"partition\"", "between = \"a\""),
    ("[[fault]]\nkind = \"partition\"", "between = [1, 2]"),
    ("[[fault]]\nkind = \"partition\"\nbetween = [\"lead\", \"alice\"]", "direction = 1"),
    ("[[fault]]\nkind = \"partition\"\nbetween = [\"lead\", \"alice\"]", "mode = 1"),
    ("[[fault]]\nkind = \"forge\"\nat = \"1s\"\nfrom = \"lead\"\nto = \"alice\"", "message = 1"),
    ("[[fault]]\nkind = \"forge\"\nat = \"1s\"\nfrom = \"lead\"\nto = \"alice\"", "message = { type = \"nope\" }"),
    (
        "[[fault]]\nkind = \"forge\"\nat = \"1s\"\nfrom = \"alice\"\nto = \"lead\"",
        "message = { type = \"shutdown_response\", request_id = 5, approve = \"yes\" }",
    ),
    ("[[fault]]\nkind = \"drop\"", "nope = 1"),
    ("[[expect]]\nstatus = \"approved\"", "request = 1"),
    ("[[expect]]\nstatus = \"working\"", "teammate = 1"),
    ("[[expect]]\nteammate = \"alice\"", "status = 1"),
    ("[[expect]]\nstate = \"complete\"", "file = 1"),
    ("[[expect]]\nfile = \"a\"", "state = 1"),
    ("[[expect]]", "ignored = \"x\""),
    ("[[expect]]\nignored = 1", "reason = 1"),
    ("[[expect]]", "refused = \"x\""),
    ("[[expect]]\nrefused = 1", "rule = 1"),
    ("[[expect]]", "expired = -1"),
    ("[[expect]]", "violation = 1"),
    ("[[expect]]", "deadlock = 1"),
    ("[[expect]]", "deadlock = [1, 2]"),
    ("[[expect]]", "deadlock = [\"alice\", \"nobody\"]"),
    ("[[expect]]", "broken = \"yes\""),
    ("[[expect]]\nteammate = \"alice\"", "gate = 1"),
    ("[[expect]]\nexpired = 1", "nope = 1"),
];

#[test]
fn no_message_names_a_rust_type_whatever_key_is_wrong() {
    let mut bad = Vec::new();
    for (table, line) in WRONG {
        // The keys written on the line: the message names one of them.
        let keys: Vec<&str> = line.split(" = ").filter_map(|part| part.rsplit([' ', '{', ',']).next()).collect();
        let key = keys[0];
        // Top-level keys go first, in place of the header's own; the rest in
        // their own table after alice.
        let src = if table.is_empty() {
            let head: String = HEAD.lines().filter(|l| !l.starts_with(key)).map(|l| format!("{l}\n")).collect();
            let alice = if key == "teammate" { "" } else { ALICE };
            format!("{line}\n{head}{alice}")
        } else {
            format!("{HEAD}{ALICE}{table}\n{line}\n")
        };
        let errors = match load_str("x.toml", &src) {
            Ok(_) => {
                bad.push(format!("accepted: {table} {line}"));
                continue;
            }
            Err(e) => e,
        };
        for e in &errors {
            if let Some(word) = RUST_WORDS.iter().find(|w| e.text().contains(*w)) {
                bad.push(format!("{table} {line}: {word:?} in {e}"));
            }
        }
        // The message names the key, so the reader knows what to fix.
        if !errors.iter().any(|e| keys.iter().any(|k| e.message.contains(k))) {
            bad.push(format!("{table} {line}: no message names any of {keys:?}:\n  {}", all(&errors)));
        }
    }
    assert!(bad.is_empty(), "{} messages not in the file's language:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn a_wrong_answer_lists_the_answers() {
    let (_, _, msg) = refuse(&format!("{ALICE}on_shutdown = \"maybe\"\n"));
    for word in ["maybe", "approve", "reject", "ignore"] {
        assert!(msg.contains(word), "{msg}");
    }
}

#[test]
fn a_work_item_written_as_text_is_shown_as_a_table() {
    let (_, _, msg) = refuse(&format!("{ALICE}work = [\"write a\"]\n"));
    assert!(msg.contains("{ write = "), "{msg}");
}

#[test]
fn an_unknown_key_lists_the_keys_and_guesses_the_intended_one() {
    let (_, _, msg) = refuse(&format!("{ALICE}on_shutdwon = \"approve\"\n"));
    assert!(msg.contains("on_shutdwon") && msg.contains("did you mean `on_shutdown`"), "{msg}");
    assert!(msg.contains("reject_reason") && msg.contains("[[teammate]]"), "{msg}");
}

// ------------------------------------------------------------ 18: every problem in one pass

#[test]
fn a_missing_about_hides_nothing() {
    let src =
        "name = \"x\"\n[policy]\nplan_timeout = \"soon\"\n[[teammate]]\nname = \"alice\"\non_shutdown = \"maybe\"\n\
               [[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"carol\"\n";
    let e = errors(src);
    for marker in ["\"soon\"", "\"maybe\"", "\"carol\""] {
        let at = pos(src, marker);
        assert!(e.iter().any(|e| (e.line, e.col) == at), "nothing at {marker} {at:?}:\n{}", all(&e));
    }
    assert!(!e.iter().any(|e| e.message.contains("about")), "about is optional:\n{}", all(&e));
}

#[test]
fn problems_in_different_tables_and_entries_are_all_reported() {
    let src = format!(
        "{HEAD}{ALICE}work = [\"write a\"]\nmax_revisions = \"3\"\n[[teammate]]\nname = \"bob\"\nrequire_plan = \"yes\"\n\
         [[expect]]\nexpired = -1\n"
    );
    let e = errors(&src);
    for marker in ["\"write a\"", "\"3\"", "\"yes\"", "-1"] {
        let at = pos(&src, marker);
        assert!(e.iter().any(|e| (e.line, e.col) == at), "nothing at {marker} {at:?}:\n{}", all(&e));
    }
}

#[test]
fn about_is_optional_in_a_users_file() {
    let s = load_str("x.toml", &format!("name = \"x\"\n{ALICE}")).expect("loads without about");
    assert_eq!(s.about, "");
}

#[test]
fn a_missing_name_is_reported_with_the_rest() {
    let src = format!("about = \"y\"\n{ALICE}on_plan = \"x\"\n");
    let e = errors(&src);
    assert!(e.iter().any(|e| e.message.contains("name")), "{}", all(&e));
    assert!(e.iter().any(|e| (e.line, e.col) == pos(&src, "\"x\"")), "{}", all(&e));
}

#[test]
fn every_bundled_scenario_says_what_it_teaches() {
    for f in common::bundled_files() {
        let s = handshake::scenario::load_file(&f).unwrap_or_else(|e| panic!("{}: {e:?}", f.display()));
        assert!(!s.about.trim().is_empty(), "{} has no `about`", f.display());
    }
}

// ------------------------------------------------------------ 20: durations

#[test]
fn long_durations_are_shown_as_people_write_them() {
    let e = errors(&format!("{HEAD}end = \"100y\"\n"));
    assert_eq!(e.len(), 1, "one reason, not also a cap no run could have:\n{}", all(&e));
    let msg = &e[0].message;
    assert!(msg.contains("100y") && msg.contains("(1y)"), "{msg}");
    assert!(!msg.contains("52596000m"), "{msg}");
}

#[test]
fn an_end_after_the_default_cap_says_to_raise_the_cap() {
    let (line, _, msg) = refuse("end = \"1h30m\"\n");
    assert_eq!(line, 3);
    assert!(msg.contains("1h30m") && msg.contains("1h") && msg.contains("cap = \"1h30m\""), "{msg}");
}

#[test]
fn a_bad_duration_shows_what_a_good_one_looks_like() {
    let (_, _, msg) = refuse("[policy]\nshutdown_timeout = \"fast\"\n");
    for good in ["500ms", "5s", "2m", "1h30m"] {
        assert!(msg.contains(good), "{msg}");
    }
    assert!(!msg.contains("expected number"), "{msg}");
}

/// The faults that stop a teammate (crash, stall, torn write) refuse the
/// lead in their own words, and a torn write wants file inboxes.
#[test]
fn faults_that_stop_a_teammate_refuse_the_lead_and_a_torn_write_wants_file_mode() {
    let team = "name = \"t\"\nabout = \"a\"\n[[teammate]]\nname = \"alice\"\n";
    let file_mode = "[policy]\nmailbox = \"file\"\n";
    let fault = |kind: &str, agent: &str, extra: &str| {
        format!("[[fault]]\nkind = \"{kind}\"\nagent = \"{agent}\"\nat = \"1s\"\n{extra}")
    };
    let cases = [
        (format!("{team}{}", fault("crash", "lead", "")), "the lead cannot crash in this version"),
        (format!("{team}{}", fault("stall", "lead", "until = \"2s\"\n")), "the lead cannot stall in this version"),
        (format!("{team}{file_mode}{}", fault("torn_write", "lead", "")), "the lead cannot crash in this version"),
        (format!("{team}{}", fault("torn_write", "alice", "")), "set mailbox = \"file\" in [policy]"),
        (format!("{team}{}", fault("stall", "alice", "")), "until"),
    ];
    for (src, words) in cases {
        let text = all(&errors(&src));
        assert!(text.contains(words), "{words:?} not in:\n{text}\nfor:\n{src}");
    }
    for ok in [
        format!("{team}{file_mode}{}", fault("torn_write", "alice", "restart = \"3s\"\n")),
        format!("{team}{}", fault("crash", "alice", "restart = \"3s\"\n")),
        format!("{team}{}", fault("stall", "alice", "until = \"2s\"\n")),
    ] {
        assert!(load_str("x.toml", &ok).is_ok(), "refused:\n{ok}");
    }
}

// ------------------------------------------ issue 19, point 11: small gaps

#[test]
fn a_name_with_a_newline_or_a_terminal_escape_is_refused_at_its_place() {
    for (written, shown) in [("x\\nPASS  forged", "'\\n'"), ("x\\u001b[2J", "'\\u{1b}'"), ("a\\tb", "'\\t'")] {
        let src = format!("name = \"{written}\"\n{ALICE}");
        let e = &errors(&src)[0];
        assert_eq!((e.line, e.col), (1, 8), "the value of `name`: {e}");
        assert!(e.message.contains(&format!("`name` holds the control character {shown}")), "{e}");
        assert!(e.message.contains("may hold no control characters"), "says what is allowed: {e}");
    }
    // `about` may run over lines, but not move the cursor.
    let ok = format!("name = \"x\"\nabout = \"\"\"\none\n\ttwo\n\"\"\"\n{ALICE}");
    assert!(load_str("x.toml", &ok).is_ok());
    let src = format!("name = \"x\"\nabout = \"a\\u001b[31mred\"\n{ALICE}");
    let e = &errors(&src)[0];
    assert_eq!((e.line, e.col), pos(&src, "\"a"), "{e}");
    assert!(e.message.contains("`about` holds the control character '\\u{1b}' (line breaks and tabs are fine)"), "{e}");
}

#[test]
fn prune_with_a_truncating_drain_is_refused_with_the_reason() {
    for drain in ["drain = \"truncate\"\n", ""] {
        let src = format!("{HEAD}[policy]\nmailbox = \"file\"\n{drain}prune = true\n{ALICE}");
        let e = &errors(&src)[0];
        assert_eq!((e.line, e.col), pos(&src, "true"), "{e}");
        assert!(e.message.contains("prune = true does nothing with"), "{e}");
        assert!(e.help.as_deref().unwrap_or("").contains("drain = \"offset\""), "says what works: {e}");
    }
    let ok = format!("{HEAD}[policy]\nmailbox = \"file\"\ndrain = \"offset\"\nprune = true\n{ALICE}");
    assert!(load_str("x.toml", &ok).is_ok());
}

#[test]
fn a_deadlock_naming_a_teammate_twice_is_refused() {
    let team = format!("{ALICE}[[teammate]]\nname = \"bob\"\n");
    let (line, col, message) = refuse(&format!("{team}[[expect]]\ndeadlock = [\"alice\", \"alice\"]\n"));
    let src = format!("{HEAD}{team}[[expect]]\ndeadlock = [\"alice\", \"alice\"]\n");
    assert_eq!((line, col), pos(&src, "[\"alice\""), "{message}");
    assert!(message.contains("deadlock names \"alice\" twice"), "{message}");
    assert!(message.contains("list each teammate in the deadlock once"), "{message}");
}

#[test]
fn no_duration_in_a_file_may_be_longer_than_a_run() {
    let file = "[policy]\nmailbox = \"file\"\n";
    for (body, key) in [
        (format!("{file}inbox_poll = \"2y\"\n{ALICE}"), "inbox_poll = \"2y\""),
        (format!("{file}read_cost = \"400d\"\n{ALICE}"), "read_cost = \"400d\""),
        (format!("[policy]\nshutdown_timeout = \"2y\"\n{ALICE}"), "shutdown_timeout = \"2y\""),
        (format!("{ALICE}[[step]]\nat = \"2y\"\ndo = \"shutdown\"\nto = \"alice\"\n"), "step #1 `at` = \"2y\""),
    ] {
        let src = format!("{HEAD}{body}");
        let value = key.rsplit_once(" = ").unwrap().1;
        let e = &errors(&src)[0];
        assert_eq!((e.line, e.col), pos(&src, value), "{e}");
        assert!(e.message.contains(&format!("{key} is longer than a run may be (1y)")), "{e}");
        assert_eq!(e.help.as_deref(), Some("give at most \"1y\""), "{e}");
    }
    let (_, _, message) = refuse(&format!("[policy]\nlatency = \"1ms..2y\"\n{ALICE}"));
    assert!(message.contains("a delay longer than a run may be (1y)"), "{message}");
    assert!(load_str("x.toml", &format!("{HEAD}cap = \"1y\"\n{file}inbox_poll = \"1y\"\n{ALICE}")).is_ok());
}

/// Issue 44, point 3: a file that is valid TOML has every problem said in
/// one pass, even where one mistake's place is named by another's (the
/// expectation names the request of a step whose `to` is wrong).
#[test]
fn five_unrelated_mistakes_are_five_errors() {
    let src = format!(
        "{HEAD}[policy]\nshutdown_timeout = \"5 parsecs\"\n{ALICE}on_shutdown = [\"maybe\"]\n\
         [[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alcie\"\nlabel = \"stop-alice\"\n\
         [[expect]]\nrequest = \"stop-alice\"\nstatus = \"reject\"\n\
         [[expect]]\nreceived = \"shutdown_response\"\nby = \"lead\"\nfrom = \"bobb\"\n"
    );
    let found = errors(&src);
    let at: Vec<(usize, usize)> = found.iter().map(|e| (e.line, e.col)).collect();
    let want = [
        pos(&src, "\"5 parsecs\""),
        pos(&src, "\"maybe\""),
        pos(&src, "\"alcie\""),
        pos(&src, "\"reject\""),
        pos(&src, "\"bobb\""),
    ];
    assert_eq!(at, want, "{}", all(&found));
}

/// Within one step: who is asked and with what words are each checked.
#[test]
fn a_step_with_two_mistakes_is_two_errors() {
    let src = format!(
        "{HEAD}[policy]\nstrict_hierarchy = false\n{ALICE}[[step]]\nat = \"1s\"\ndo = \"submit_plan\"\nfrom = \
         \"alice\"\nto = \"bobb\"\nplan = \"  \"\n"
    );
    let found = errors(&src);
    assert_eq!(found.len(), 2, "{}", all(&found));
    let said = all(&found);
    assert!(said.contains("\"bobb\"") && said.contains("says nothing"), "{said}");
}

/// Issue 44, point 7: a timeout longer than the run's cap could never fire:
/// refused, the cap named; with the cap raised, or "never", it is taken.
#[test]
fn a_timeout_past_the_cap_is_refused_with_the_cap_named() {
    let src = format!("{HEAD}[policy]\nplan_timeout = \"90m\"\n{ALICE}");
    let found = errors(&src);
    assert_eq!(found.len(), 1, "{}", all(&found));
    assert_eq!((found[0].line, found[0].col), pos(&src, "\"90m\""));
    let said = found[0].text();
    assert!(said.contains("plan_timeout = 1h30m") && said.contains("the default cap, 1h"), "{said}");
    assert!(said.contains("cap = \"1h30m\""), "the help raises the cap: {said}");
    let raised = format!("{HEAD}cap = \"2h\"\n[policy]\nplan_timeout = \"90m\"\n{ALICE}");
    assert!(load_str("x.toml", &raised).is_ok());
    let low = format!("{HEAD}cap = \"10s\"\n[policy]\nshutdown_timeout = \"30s\"\n{ALICE}");
    assert!(all(&errors(&low)).contains("the file's cap, 10s"));
    let never = format!("{HEAD}cap = \"10s\"\n[policy]\nshutdown_timeout = \"never\"\n{ALICE}");
    assert!(load_str("x.toml", &never).is_ok());
    // A cap that does not read is said once, not also as a default cap nobody wrote.
    let bad_cap = format!("{HEAD}cap = \"3 hourz\"\n[policy]\nshutdown_timeout = \"2h\"\n{ALICE}");
    let found = errors(&bad_cap);
    assert_eq!(found.len(), 1, "{}", all(&found));
    assert!(found[0].text().contains("cap"), "{}", all(&found));
}

/// A scenario author's review: an [[expect]] holding only `broken` (or
/// `reason`, or `status`) was told it "does not go with `violation`", a key
/// it did not have; and an unknown invariant with every defence on was
/// told it "cannot happen", so the author switched a defence off before
/// learning the name was wrong.
#[test]
fn an_expect_with_a_key_but_no_subject_names_the_subject_it_needs() {
    for (key, value, needs) in [
        ("broken", "false", "`deadlock`"),
        ("reason", "\"late\"", "`ignored`"),
        ("status", "\"approved\"", "`request` or `teammate`"),
        ("count", "1", "`received`"),
    ] {
        let (_, _, message) = refuse(&format!("{ALICE}[[expect]]\n{key} = {value}\n"));
        assert!(message.contains(&format!("`{key}` needs {needs}")), "{key}: {message}");
        assert!(!message.contains("violation"), "{key}: {message}");
    }
    let src = format!("{HEAD}{ALICE}[[expect]]\nviolation = \"nonsense\"\n");
    let errors = errors(&src);
    assert!(errors[0].text().contains("unknown invariant \"nonsense\""), "{}", all(&errors));
    assert_eq!((errors[0].line, errors[0].col), pos(&src, "\"nonsense\""));
    assert!(!all(&errors).contains("cannot happen"), "{}", all(&errors));
}

/// A scenario author's review: a label on a step to a group was refused,
/// and then every [[expect]] naming it was refused again as an unknown
/// label, though a step left out for a problem never makes its label
/// unknown (docs/scenarios.md).
#[test]
fn a_label_refused_on_a_group_step_is_not_blamed_again_where_it_is_used() {
    let src = format!(
        "{HEAD}[[teammate]]\nname = \"w\"\ncount = 3\n[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"w-*\"\nlabel = \"stop\"\n\
         [[expect]]\nrequest = \"stop\"\nstatus = \"approved\"\n"
    );
    let errors = errors(&src);
    assert_eq!(errors.len(), 1, "{}", all(&errors));
    assert!(errors[0].text().contains("cannot carry a label"), "{}", all(&errors));
}

/// A scenario author's review: `cap` under [policy] listed [policy]'s keys,
/// not where `cap` goes.
#[test]
fn a_top_level_key_under_a_table_is_told_where_it_goes() {
    let (line, _, message) = refuse(&format!("{ALICE}[policy]\ncap = \"10m\"\n"));
    assert_eq!(line, 6);
    assert!(message.contains("unknown field `cap` in [policy]"), "{message}");
    assert!(message.contains("`cap` is a key of the file's top level"), "{message}");
}
