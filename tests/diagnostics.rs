//! Scenario-file problems shown as rustc shows its errors, and the gaps issue
//! 24 (point 1) found: each problem points at what is wrong, says what was
//! expected, guesses a mistyped word, and hides no other problem behind
//! follow-on errors of its own.

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
  = help: did you mean `shutdown`? use one of shutdown, submit_plan, request_plan, respawn, answer, message, broadcast
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
