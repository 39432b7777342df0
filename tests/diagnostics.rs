//! Scenario-file problems shown as rustc shows its errors, and the gaps issue
//! 24 (point 1) found: each problem points at what is wrong, says what was
//! expected, guesses a mistyped word, and hides no other problem behind
//! follow-on errors of its own.

mod common;

use common::binary::{handshake, TempDir};
use handshake::diagnostic::render;
use handshake::scenario::{load_str, ScenarioError};

const HEAD: &str = "name = \"x\"\nabout = \"y\"\n[[teammate]]\nname = \"alice\"\n";

fn errors(src: &str) -> Vec<ScenarioError> {
    match load_str("x.toml", src) {
        Ok(_) => panic!("should be refused:\n{src}"),
        Err(errors) => errors,
    }
}

/// The 1-based line and column of the first `marker` in `src`.
fn pos(src: &str, marker: &str) -> (usize, usize) {
    let at = src.find(marker).unwrap_or_else(|| panic!("{marker:?} not in the file"));
    let line = src[..at].matches('\n').count() + 1;
    let col = src[..at].rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn all(errors: &[ScenarioError]) -> String {
    errors.iter().map(|e| render(e, false)).collect::<Vec<_>>().join("\n")
}

const FORGE: &str = "[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"\nlabel = \"stop-alice\"\n\
                     [[fault]]\nkind = \"forge\"\nat = \"2s\"\nfrom = \"alice\"\nto = \"lead\"\n";

#[test]
fn a_problem_is_shown_with_its_line_a_caret_a_label_and_the_fix() {
    let src = format!("{HEAD}[[step]]\nat = \"1s\"\ndo = \"shutdwon\"\nto = \"alice\"\n");
    let e = errors(&src);
    assert_eq!(e.len(), 1, "{}", all(&e));
    let want = "\
error: step #1: unknown action \"shutdwon\"
 --> x.toml:7:6
  |
7 | do = \"shutdwon\"
  |      ^^^^^^^^^^ unknown action
  |
  = help: did you mean `shutdown`? use one of shutdown, submit_plan, assign_task, request_plan, respawn, answer, message, broadcast
";
    assert_eq!(render(&e[0], false), want);
    // Colour only when asked for: the caller decides (a terminal, NO_COLOR, --color).
    assert!(!render(&e[0], false).contains('\x1b'));
    let coloured = render(&e[0], true);
    assert!(coloured.contains("\x1b[") && coloured.contains("shutdwon"), "{coloured:?}");
}

#[test]
fn a_problem_with_the_whole_file_names_the_file() {
    let e = ScenarioError::whole_file("gone.toml", "no such file or folder");
    assert_eq!(render(&e, false), "error: no such file or folder\n--> gone.toml\n");
}

#[test]
fn a_problem_on_a_very_long_line_shows_a_bounded_part_of_it_and_the_true_column() {
    let filler = "a".repeat(5000);
    let src = format!("{HEAD}reject_reason = \"{filler}\"\non_plan = [\"approve\", \"{filler}\", \"maybe\"]\n");
    let e = errors(&src);
    let shown = render(&e[0], false);
    let (line, col) = pos(&src, &format!("\"{filler}\", \"maybe"));
    assert!(shown.contains(&format!(" --> x.toml:{line}:{col}\n")), "{shown}");
    assert!(shown.len() < 600, "the line is cut: {} bytes", shown.len());
    assert!(shown.contains("not an answer"), "{shown}");
}

#[test]
fn a_forged_boolean_written_as_text_is_pointed_at_and_says_what_a_boolean_is() {
    let src = format!(
        "{HEAD}{FORGE}message = {{ type = \"shutdown_response\", request_id = \"@stop-alice\", approve = \"yes\" }}\n"
    );
    let e = errors(&src);
    assert_eq!(e.len(), 1, "{}", all(&e));
    assert_eq!((e[0].line, e[0].col), pos(&src, "\"yes\""), "at the value, not at `message =`:\n{}", all(&e));
    assert!(e[0].message.contains("`message.approve` must be a boolean, `true` or `false`, not \"yes\""), "{}", e[0]);
    assert!(e[0].help.as_deref().unwrap_or("").contains("approve = true"), "{}", e[0]);
}

#[test]
fn a_forged_request_id_that_is_no_id_says_how_to_quote_a_label() {
    let src = format!(
        "{HEAD}{FORGE}message = {{ type = \"shutdown_response\", request_id = \"stop-alice\", approve = true }}\n"
    );
    let e = errors(&src);
    assert_eq!(e.len(), 1, "{}", all(&e));
    assert_eq!((e[0].line, e[0].col), pos(&src, "\"stop-alice\", approve"), "{}", all(&e));
    assert!(e[0].message.contains("is not a request id"), "{}", e[0]);
    assert!(e[0].help.as_deref().unwrap_or("").contains("request_id = \"@stop-alice\""), "{}", e[0]);
    // An @label that names no request is shown at the request_id too.
    let src = format!(
        "{HEAD}{FORGE}message = {{ type = \"shutdown_response\", request_id = \"@stop-alcie\", approve = true }}\n"
    );
    let e = errors(&src);
    assert_eq!((e[0].line, e[0].col), pos(&src, "\"@stop-alcie\""), "{}", all(&e));
    assert!(e[0].help.as_deref().unwrap_or("").contains("did you mean `stop-alice`"), "{}", e[0]);
}

#[test]
fn a_forged_message_missing_a_field_is_shown_at_the_message() {
    let src = format!("{HEAD}{FORGE}message = {{ type = \"shutdown_response\", request_id = \"@stop-alice\" }}\n");
    let e = errors(&src);
    assert_eq!((e[0].line, e[0].col), pos(&src, "{ type"), "{}", all(&e));
    assert!(e[0].message.contains("approve"), "{}", e[0]);
}

#[test]
fn a_mistyped_word_of_a_closed_set_gets_a_guess_as_a_mistyped_key_does() {
    let cases = [
        ("[[step]]\nat = \"1s\"\ndo = \"shutdwon\"\nto = \"alice\"\n", "did you mean `shutdown`?"),
        ("[[fault]]\nkind = \"dorp\"\n", "did you mean `drop`?"),
        ("[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alcie\"\n", "did you mean `alice`?"),
        ("[[expect]]\nteammate = \"alice\"\nstatus = \"shutdwon\"\n", "did you mean `shutdown`?"),
        ("on_shutdown = \"aprove\"\n", "did you mean `approve`?"),
        ("[[expect]]\nreceived = \"shutdown_reqest\"\nby = \"alice\"\n", "did you mean `shutdown_request`?"),
    ];
    for (body, guess) in cases {
        let e = errors(&format!("{HEAD}{body}"));
        assert!(e[0].help.as_deref().unwrap_or("").contains(guess), "{guess} for {body}:\n{}", all(&e));
    }
}

#[test]
fn a_step_left_out_for_a_bad_value_does_not_make_its_label_unknown_elsewhere() {
    // A bad `at` (built later) and a bad `to` (read first): each once, and
    // nothing about the label it carried.
    for bad in ["at = \"soon\"\ndo = \"shutdown\"\nto = \"alice\"", "at = \"1s\"\ndo = \"shutdown\"\nto = 1"] {
        let src = format!(
            "{HEAD}[[step]]\n{bad}\nlabel = \"stop-alice\"\n[[fault]]\nkind = \"drop\"\nrequest = \"stop-alice\"\n\
             [[expect]]\nrequest = \"stop-alice\"\nstatus = \"approved\"\n[[step]]\nat = \"2s\"\ndo = \"answer\"\n\
             type = \"shutdown_response\"\nrequest = \"stop-alice\"\napprove = true\n"
        );
        let e = errors(&src);
        assert_eq!(e.len(), 1, "one problem, no follow-on about the label:\n{}", all(&e));
    }
    // A label no step gives is still unknown.
    let e = errors(&format!("{HEAD}[[expect]]\nrequest = \"stop-alice\"\nstatus = \"approved\"\n"));
    assert!(e[0].message.contains("unknown label \"stop-alice\""), "{}", all(&e));
}

#[test]
fn zero_and_negative_steps_are_refused_with_the_same_bound() {
    let say = |v: &str| {
        let src = format!("{HEAD}work = [{{ write = \"a\", steps = {v} }}]\n");
        let e = errors(&src);
        let (line, col) = pos(&src, &format!("steps = {v}"));
        assert_eq!((e[0].line, e[0].col), (line, col + "steps = ".len()), "{}", all(&e));
        e[0].message.replace(&format!("not {v}"), "not N")
    };
    assert_eq!(say("-3"), say("0"));
    assert!(say("0").contains("from 1 to 1000000"), "{}", say("0"));
    let count = |v: &str| errors(&format!("{HEAD}count = {v}\n"))[0].message.replace(&format!("not {v}"), "not N");
    assert_eq!(count("-3"), count("0"));
    assert!(count("0").contains("from 1 to 100000"), "{}", count("0"));
}

// ------------------------------------------------ every problem is complete

/// A file's problems each point at a place in it, label it and say the fix.
fn complete(errors: &[ScenarioError]) -> Result<(), String> {
    for e in errors {
        let missing: Vec<&str> = [
            ("a place", e.line > 0 && e.excerpt.is_some()),
            ("a label", e.label.as_deref().is_some_and(|l| !l.trim().is_empty())),
            ("a help", e.help.as_deref().is_some_and(|h| !h.trim().is_empty())),
        ]
        .into_iter()
        .filter(|(_, has)| !has)
        .map(|(what, _)| what)
        .collect();
        if !missing.is_empty() {
            return Err(format!("no {}:\n{}", missing.join(", no "), render(e, false)));
        }
    }
    Ok(())
}

const ALICE: &str = "[[teammate]]\nname = \"alice\"\n";
const FILE_MODE: &str = "[policy]\nmailbox = \"file\"\n";
const STOP: &str = "[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"\nlabel = \"stop-alice\"\n";

/// A file of `top`, then the teammate alice, then `rest`.
fn file(top: &str, rest: &str) -> String {
    format!("name = \"x\"\nabout = \"y\"\n{top}{ALICE}{rest}")
}

/// A file with `rest` after the teammate.
fn after(rest: &str) -> String {
    file("", rest)
}

/// A file with one step of `keys` at one second.
fn step(keys: &str) -> String {
    after(&format!("[[step]]\nat = \"1s\"\n{keys}"))
}

/// A file with the step `stop-alice`, then one fault of `keys`.
fn fault(keys: &str) -> String {
    after(&format!("{STOP}[[fault]]\n{keys}"))
}

/// A file with one expectation of `keys`.
fn expect(keys: &str) -> String {
    after(&format!("[[expect]]\n{keys}"))
}

/// A file that forges `message` from alice to the lead.
fn forge(message: &str) -> String {
    fault(&format!("kind = \"forge\"\nat = \"2s\"\nfrom = \"alice\"\nto = \"lead\"\nmessage = {message}\n"))
}

/// A shutdown step asking alice at `at`.
fn shutdown(at: &str) -> String {
    format!("[[step]]\nat = \"{at}\"\ndo = \"shutdown\"\nto = \"alice\"\n")
}

/// Bad files of the whole file: its TOML, its values' types and bounds, its
/// shape, its durations, names, team and inboxes.
fn problems_of_the_file() -> Vec<(String, &'static str)> {
    vec![
        // TOML syntax
        ("name = \"x\"\nabout = y\n".to_string(), "must be quoted"),
        ("name = \"x\"\n[[teammate]\nname = \"a\"\n".into(), "unclosed array table"),
        ("name = \"x\"\n[policy\n".into(), "table"),
        ("name = \"x\"\nname = \"y\"\n".into(), "duplicate key"),
        ("name = \"x\"\nabout = \"open\n".into(), "invalid basic string"),
        ("name = \"x\"\nseed = [1, 2\n".into(), "unclosed array"),
        ("name = \"x\"\nseed = [1,, 2]\n".into(), "extra comma"),
        ("name = \"x\"\nseed = { a = 1\n".into(), "inline table"),
        ("name = \"x\"\nseed =\n".into(), "value"),
        ("name = \"x\"\n= 3\n".into(), ""),
        // A value of the wrong type
        ("name = 1\n".into(), "`name` must be text"),
        (file("cap = 5\n", ""), "`cap` must be a duration"),
        (file("seed = \"3\"\n", ""), "`seed` must be a whole number"),
        (file("policy = 1\n", ""), "`policy` must be a table"),
        (file("step = 1\n", ""), "`step` must be a list of tables"),
        (file("step = [1]\n", ""), "`step` must be a table"),
        (after("work = 1\n"), "`work` must be a list of work items"),
        (after("work = [1]\n"), "`work` must be a list of work items"),
        (after("require_plan = \"yes\"\n"), "`require_plan` must be a boolean"),
        (fault("kind = \"drop\"\nprobability = \"half\"\n"), "`probability` must be a number"),
        (expect("deadlock = [1, 2]\n"), "`deadlock` must be"),
        (after("[policy.defences]\nsender_check = \"no\"\n"), "`sender_check` must be true or false"),
        (forge("1"), "`message` must be a table"),
        // Numbers out of bounds
        (after("work = [{ write = \"notes.md\", steps = -3 }]\n"), "from 1 to 1000000"),
        (after("work = [{ write = \"notes.md\", steps = 0 }]\n"), "from 1 to 1000000"),
        (after("max_revisions = 5000\n"), "more than a file may ask for"),
        (file("seed = 99999999999999999999\n", ""), "`seed` must be a whole number"),
        (after("count = 0\n"), "`count` must be a whole number from 1"),
        // The file's shape
        (file("[step]\nat = \"1s\"\n", ""), "two brackets"),
        (after(&"[[fault]]\nkind = \"drop\"\n".repeat(10_001)), "too many [[fault]]"),
        (after(&format!("work = [{}]\n", vec!["{ write = \"a\" }"; 1001].join(", "))), "too many work items"),
        ("about = \"y\"\n".into(), "needs a `name`"),
        (file("nmae = \"x\"\n", ""), "unknown field `nmae`"),
        (after("[[teammate]]\ncount = 2\n"), "needs a `name`"),
        (after("[[step]]\ndo = \"shutdown\"\nto = \"alice\"\n"), "needs `at`"),
        (after("[policy.defences]\nsender_chek = false\n"), "[policy.defences]"),
        (after("[policy]\non_plan_timeout = \"maybe\"\n"), "not one of its settings"),
        (after("on_shutdown = \"aprove\"\n"), "not an answer"),
        // Durations and time
        (file("cap = \"2y\"\n", ""), "longer than a run"),
        (file("cap = \"5\"\n", ""), "has no unit"),
        (file("cap = \"soon\"\n", ""), "is not a duration"),
        (file("cap = \"1ns\"\n", ""), "finer than a millisecond"),
        (file("cap = \"99999999999999999999999y\"\n", ""), "too long"),
        (after("[policy]\nlatency = \"2y\"\n"), "longer than a run"),
        (after("[policy]\nlatency = \"5s..1s\"\n"), "runs backwards"),
        (after("[policy]\nshutdown_timeout = \"0ms\"\n"), "expire the moment"),
        (file("end = \"2h\"\n", ""), "comes after the default cap"),
        (file("end = \"2h\"\ncap = \"1h\"\n", ""), "comes after the cap"),
        (after(&format!("{}{}", shutdown("2s"), shutdown("1s"))), "in the past"),
        (file("end = \"10s\"\n", &shutdown("20s")), "after the end of the run"),
        // Names and text
        ("name = \"\"\n".into(), "cannot be empty"),
        ("name = \"a\\u001bb\"\n".into(), "control character"),
        (after("name = \"alice\"\n"), "duplicate key"),
        (after(ALICE), "two teammates are named"),
        (after("[[teammate]]\nname = \"Alice\"\n"), "differ only in case"),
        (after("[[teammate]]\nname = \"a b\"\n"), "teammate name"),
        (after("[[teammate]]\nname = \"lead\"\n"), "reserved"),
        (after(&format!("[[teammate]]\nname = \"{}\"\ncount = 10\n", "z".repeat(62))), "the names run up to"),
        (after("[[teammate]]\nname = \"b\"\ncount = 2\n[[teammate]]\nname = \"b-2\"\n"), "two teammates are named"),
        // The team's size and load
        (
            after("[[teammate]]\nname = \"a\"\ncount = 60000\n[[teammate]]\nname = \"b\"\ncount = 60000\n"),
            "at most 100000",
        ),
        (after("[[teammate]]\nname = \"a\"\ncount = 2\nwork = [{ write = \"x\", steps = 1000000 }]\n"), "team's work"),
        (after("[[teammate]]\nname = \"a\"\ncount = 1001\nmax_revisions = 1000\n"), "revise plans"),
        (after("on_shutdown = []\n"), "needs at least one answer"),
        (after("on_shutdown = \"reject\"\n"), "no `reject_reason`"),
        (after("work = [{ write = \"a\", edit = \"b\" }]\n"), "exactly one of"),
        (after("work = [{ steps = 2 }]\n"), "exactly one of"),
        // File inboxes
        (after("[policy]\ndrain = \"offset\"\n"), "file inboxes only"),
        (after("[policy]\nmailbox = \"fiel\"\n"), "mailbox"),
        (after(&format!("{FILE_MODE}drain = \"trunc\"\n")), "drain"),
        (after(&format!("{FILE_MODE}inbox_poll = \"0ms\"\n")), "read without end"),
        (after(&format!("{FILE_MODE}prune = true\n")), "prune = true does nothing"),
        (after("[policy]\ndeadlocks = \"fial\"\n"), "deadlocks"),
    ]
}

/// Bad files of the steps and faults.
fn problems_of_steps_and_faults() -> Vec<(String, &'static str)> {
    vec![
        // Steps
        (step("do = \"shutdwon\"\nto = \"alice\"\n"), "unknown action"),
        (step("do = \"shutdown\"\nto = \"alcie\"\n"), "no agent is named"),
        (step("do = \"shutdown\"\n"), "needs `to`"),
        (step("do = \"message\"\ntext = \"hi\"\n"), "needs `to`"),
        (step("do = \"request_plan\"\n"), "needs `to`"),
        (step("do = \"respawn\"\n"), "needs `to`"),
        (step("do = \"respawn\"\nto = \"lead\"\n"), "the lead respawns a teammate"),
        (step("do = \"submit_plan\"\n"), "needs `from`"),
        (step("do = \"broadcast\"\nto = \"alice\"\n"), "does not apply to broadcast"),
        (step("do = \"shutdown\"\nto = \"alice\"\nlabel = \"a b\"\n"), "label:"),
        (step("do = \"answer\"\nrequest = \"x\"\napprove = true\n"), "needs `type`"),
        (step("do = \"answer\"\ntype = \"shutdown_reponse\"\nrequest = \"x\"\napprove = true\n"), "not a response type"),
        (step("do = \"answer\"\ntype = \"shutdown_response\"\nrequest = \"x\"\n"), "needs `approve"),
        (step("do = \"answer\"\ntype = \"shutdown_response\"\napprove = true\n"), "quotes one request"),
        (step("do = \"answer\"\ntype = \"plan_approval_response\"\nrequest_id = \"abc\"\napprove = true\n"), "needs `to`"),
        (step("do = \"answer\"\ntype = \"shutdown_response\"\nrequest = \"later\"\napprove = true\n"), "no step before this one"),
        (after(&format!("{STOP}{}", STOP.replace("1s", "2s"))), "used twice"),
        // Faults
        (fault("at = \"1s\"\n"), "needs a `kind`"),
        (fault("kind = \"dorp\"\n"), "unknown kind"),
        (fault("kind = \"drop\"\nagent = \"alice\"\n"), "does not apply to a drop fault"),
        (fault("kind = \"drop\"\ncount = 0\n"), "count = 0 touches nothing"),
        (fault("kind = \"drop\"\ncount = -3\n"), "`count` must be a whole number from 1 to 4294967295, not -3"),
        (fault("kind = \"crash\"\nagent = \"alice\"\n"), "missing `at`"),
        (fault("kind = \"delay\"\n"), "missing `delay`"),
        (fault("kind = \"partition\"\n"), "missing `between`"),
        (fault("kind = \"stall\"\nat = \"1s\"\nagent = \"alice\"\n"), "missing `until`"),
        (fault("kind = \"forge\"\nat = \"1s\"\nto = \"lead\"\nmessage = { type = \"message\" }\n"), "missing `from`"),
        (fault("kind = \"replay\"\nat = \"2s\"\n"), "missing `request`"),
        (fault("kind = \"drop\"\nat = \"5s\"\nuntil = \"1s\"\n"), "must come after `at`"),
        (file("end = \"10s\"\n", &format!("{STOP}[[fault]]\nkind = \"drop\"\nat = \"20s\"\n")), "after the end of the run"),
        (fault("kind = \"delay\"\ndelay = \"x\"\n"), "delay"),
        (fault("kind = \"drop\"\nprobability = 2\n"), "between 0 and 1"),
        (fault("kind = \"drop\"\nfrom = \"bob\"\n"), "no agent is named"),
        (fault("kind = \"drop\"\ntype = \"shutdown_reqest\"\n"), "unknown message type"),
        (fault("kind = \"drop\"\nrequest = \"stop-alcie\"\n"), "unknown label"),
        (fault("kind = \"partition\"\nbetween = [\"lead\"]\n"), "exactly two agents"),
        (fault("kind = \"partition\"\nbetween = [\"lead\", \"bob\"]\n"), "no agent is named"),
        (fault("kind = \"partition\"\nbetween = [\"alice\", \"alice\"]\n"), "two different agents"),
        (fault("kind = \"partition\"\nbetween = [\"lead\", \"alice\"]\ndirection = \"up\"\n"), "not a direction"),
        (fault("kind = \"partition\"\nbetween = [\"lead\", \"alice\"]\nmode = \"keep\"\n"), "not a mode"),
        (fault("kind = \"torn_write\"\nat = \"1s\"\nagent = \"alice\"\n"), "torn write"),
        (fault("kind = \"junk_line\"\nat = \"1s\"\nagent = \"alice\"\n"), "junk line"),
        (fault("kind = \"crash\"\nat = \"1s\"\nagent = \"lead\"\n"), "the lead cannot crash"),
        (fault("kind = \"replay\"\nat = \"2s\"\nrequest = \"stop-alice\"\ntype = \"message\"\n"), "not a protocol message type"),
        (fault("kind = \"replay\"\nat = \"2s\"\nrequest = \"stop-alice\"\ntype = [\"shutdown_request\", \"shutdown_response\"]\n"), "one message `type`"),
        (forge("{ type = \"shutdown_response\", request_id = \"@stop-alice\" }"), "not a valid message"),
        (forge("{ type = \"shutdown_response\", request_id = \"@stop-alice\", approve = \"yes\" }"), "must be a boolean"),
        (forge("{ type = \"shutdown_response\", request_id = \"stop-alice\", approve = true }"), "not a request id"),
        (forge("{ type = \"shutdown_respnse\", request_id = \"@stop-alice\", approve = true }"), "not a message type"),
        (forge("{ type = \"shutdown_response\", request_id = 1, approve = true }"), "must be text"),
        (forge("{ type = \"shutdown_response\", request_id = \"@stop-alice\", approve = true, deadline = \"soon\" }"), "milliseconds"),
    ]
}

/// Bad files of the expectations.
fn problems_of_expectations() -> Vec<(String, &'static str)> {
    vec![
        // Expectations
        (expect("request = \"stop-alice\"\nstatus = \"approved\"\n"), "unknown label"),
        (expect("request = \"alice/shutdown/1\"\n"), "needs `status`"),
        (expect("request = \"alice/shutdown/1\"\nstatus = \"aproved\"\n"), "not a status"),
        (expect("request = \"alice/shutdown/1\"\nstatus = \"approved\"\nstate = \"complete\"\n"), "does not go with"),
        (expect("request = \"alice/shutdown/1\"\nstatus = \"approved\"\nbroken = true\n"), "does not go with"),
        (expect(""), "checks one thing"),
        (expect("request = \"alice/shutdown/1\"\nstatus = \"approved\"\nfile = \"a.md\"\n"), "checks one thing"),
        (expect("teammate = \"alice\"\nstatus = \"shutdown\"\ngate = \"approved\"\n"), "not both"),
        (expect("teammate = \"alice\"\n"), "needs `status`"),
        (expect("teammate = \"lead\"\nstatus = \"idle\"\n"), "the lead is not a teammate"),
        (expect("teammate = \"alice\"\nstatus = \"shutdwon\"\n"), "not a status"),
        (expect("teammate = \"alice\"\ngate = \"open\"\n"), "not a gate state"),
        (expect("file = \"a.md\"\n"), "needs `state`"),
        (expect("file = \"a.md\"\nstate = \"done\"\n"), "not a file state"),
        (expect("ignored = 1\nreason = \"lat\"\n"), "not a reason"),
        (expect("refused = 1\nrule = \"strict\"\n"), "not a rule"),
        (expect("received = \"shutdown_request\"\n"), "needs `by`"),
        (expect("received = \"shutdown_reqest\"\nby = \"alice\"\n"), "unknown message type"),
        (expect("inbox = \"alice\"\nlines = 1\n"), "needs mailbox = \"file\""),
        (after(&format!("{FILE_MODE}[[expect]]\ninbox = \"alice\"\n")), "needs `lines`"),
        (expect("deadlock = [\"alice\"]\n"), "at least two"),
        (expect("deadlock = [\"alice\", \"alice\"]\n"), "twice"),
        (expect("deadlock = [\"lead\", \"alice\"]\n"), "never part of a deadlock"),
        (expect("violation = \"no-silent-loss\"\n"), "needs a defence switched off"),
        (after(&format!("{FILE_MODE}[[expect]]\nviolation = \"single-terminal\"\n")), "no-silent-loss only"),
        (
            after("[policy.defences]\nsender_check = false\n[[expect]]\nviolation = \"single-termnal\"\n"),
            "unknown invariant",
        ),
    ]
}

/// One bad file for each way `check` can refuse one, with words of the
/// problem it must raise: each must be shown with its place, a label and a
/// help.
fn every_kind_of_problem() -> Vec<(String, &'static str)> {
    let mut cases = problems_of_the_file();
    cases.extend(problems_of_steps_and_faults());
    cases.extend(problems_of_expectations());
    // A broadcast whose copies alone pass the inbox files' bound.
    let text = "x".repeat(300_000);
    cases.push((
        file(FILE_MODE, &format!("[[teammate]]\nname = \"w\"\ncount = 1000\n[[step]]\nat = \"1s\"\ndo = \"broadcast\"\ntext = \"{text}\"\n")),
        "more than the inbox files may hold",
    ));
    cases
}

#[test]
fn every_kind_of_problem_is_shown_at_its_place_with_a_label_and_a_help() {
    let mut bad = Vec::new();
    for (src, says) in every_kind_of_problem() {
        let e = match load_str("x.toml", &src) {
            Ok(_) => {
                bad.push(format!("accepted:\n{src}"));
                continue;
            }
            Err(e) => e,
        };
        if !e.iter().any(|e| e.message.contains(says)) {
            bad.push(format!("no problem says {says:?}:\n{}", all(&e)));
        }
        if let Err(why) = complete(&e) {
            bad.push(why);
        }
    }
    assert!(bad.is_empty(), "{} of the cases fall short:\n\n{}", bad.len(), bad.join("\n\n"));
}

/// Whether `line` is a snippet's underline with a label: `  |   ^^^ label`
/// (or rustc's `---` for a secondary place).
fn underline_with_label(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix('|') else { return false };
    let rest = rest.trim_start();
    let marks = rest.len() - rest.trim_start_matches(['^', '-']).len();
    marks > 0 && !rest[marks..].trim().is_empty()
}

#[test]
fn check_shows_each_family_of_problem_with_its_line_an_underline_a_label_and_a_help() {
    // One file per family of problem that lacked a label or a help.
    let head = "name = \"x\"\nabout = \"y\"\n";
    let files = [
        ("duplicate-teammate", format!("{head}{ALICE}{ALICE}")),
        ("duplicate-label", format!("{head}{ALICE}{STOP}{}", STOP.replace("1s", "2s"))),
        ("toml-syntax", format!("{head}[[teammate]\nname = \"alice\"\n")),
        ("toml-unquoted", "name = \"x\"\nabout = y\n".to_string()),
        ("steps-bound", format!("{head}{ALICE}work = [{{ write = \"notes.md\", steps = -3 }}]\n")),
        ("wrong-type", format!("{head}cap = 5\n{ALICE}")),
        ("duration", format!("{head}cap = \"1ns\"\n{ALICE}")),
        ("name", format!("{head}[[teammate]]\nname = \"a b\"\n")),
        ("control-character", "name = \"a\\u001bb\"\n".to_string()),
        ("missing-key", format!("{head}{ALICE}[[step]]\nat = \"1s\"\ndo = \"message\"\n")),
        ("fault-missing-key", format!("{head}{ALICE}[[fault]]\nkind = \"crash\"\nagent = \"alice\"\n")),
        ("step-order", format!("{head}{ALICE}{}{STOP}", STOP.replace("1s", "2s").replace("stop-alice", "a"))),
        ("file-mode-only", format!("{head}[policy]\ndrain = \"offset\"\n{ALICE}")),
        ("zero-timeout", format!("{head}[policy]\nshutdown_timeout = \"0ms\"\n{ALICE}")),
        ("defence", format!("{head}[policy.defences]\nsender_chek = false\n{ALICE}")),
        ("work-item", format!("{head}{ALICE}work = [{{ write = \"a\", edit = \"b\" }}]\n")),
        ("partition", format!("{head}{ALICE}[[fault]]\nkind = \"partition\"\nbetween = [\"lead\"]\n")),
        ("expect-incomplete", format!("{head}{ALICE}[[expect]]\nfile = \"a.md\"\n")),
        ("expect-impossible", format!("{head}{ALICE}[[expect]]\nviolation = \"no-silent-loss\"\n")),
        ("one-bracket", format!("{head}{ALICE}[step]\nat = \"1s\"\n")),
    ];
    let dir = TempDir::new("diagnostics");
    let mut bad = Vec::new();
    for (name, text) in &files {
        let path = dir.write(&format!("{name}.toml"), text);
        let ran = handshake(&["--color", "never", "check", &path]);
        let lines: Vec<&str> = ran.stderr.lines().collect();
        let count = |p: fn(&str) -> bool| lines.iter().filter(|l| p(l)).count();
        let errors = count(|l| l.starts_with("error: "));
        let places = count(|l| l.trim_start().starts_with("--> ") && l.contains(".toml:"));
        let underlines = count(underline_with_label);
        let helps = count(|l| l.trim_start().starts_with("= help: "));
        if ran.code != 2 || errors == 0 || [places, underlines, helps] != [errors; 3] {
            bad.push(format!(
                "{name}: {errors} errors, {places} `-->` lines, {underlines} labelled underlines, {helps} helps\n{}",
                ran.explain()
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
}

#[test]
fn a_problem_of_the_whole_file_has_no_place_to_point_at_but_still_a_help() {
    let dir = TempDir::new("whole-file");
    let folder = std::path::Path::new(&dir.0);
    let gone = folder.join("gone.toml");
    let empty = folder.join("empty");
    std::fs::create_dir_all(&empty).expect("a folder");
    let huge = format!("name = \"x\"\n{}", "# padding\n".repeat(500_000));
    let problems = [
        handshake::scenario::read_file(folder).expect_err("a folder is no file"),
        handshake::scenario::read_file(&gone).expect_err("no such file"),
        errors(&huge).remove(0),
        handshake::scenario::discover::expand(std::slice::from_ref(&gone)).expect_err("no such path"),
        handshake::scenario::discover::expand(&[empty]).expect_err("no scenario in the folder"),
    ];
    for e in &problems {
        assert_eq!(e.line, 0, "a problem of the whole file: {e}");
        let shown = render(e, false);
        assert!(shown.lines().any(|l| l.trim_start().starts_with("= help: ")), "{shown}");
    }
}
