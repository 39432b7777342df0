//! Bad input told to a program as well as to a person. With `--format json`
//! a refusal (exit 2) is one JSON document on stdout, the error object of
//! docs/json.md, where the report would have been: a machine reads one
//! document either way. stderr says what it says without `--format json`,
//! word for word, so a person watching a pipeline still reads why.

use super::{Format, EXIT_BAD_INPUT};
use crate::scenario::ScenarioError;
use std::fmt;

/// One problem, and where it is when that is known: a place in a file, or
/// the option whose value is wrong. Every key is always there (`null` when
/// unknown), so that a reader need not test for keys.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// What is wrong, in one line.
    pub message: String,
    pub path: Option<String>,
    /// 1-based, as an editor counts.
    pub line: Option<usize>,
    /// 1-based, in characters.
    pub column: Option<usize>,
    /// The few words printed under the offending text.
    pub label: Option<String>,
    /// The fix: the values allowed, the word probably meant.
    pub help: Option<String>,
    /// The option at fault, by its long name (`--seeds`).
    pub flag: Option<String>,
}

impl Problem {
    pub fn new(message: impl Into<String>) -> Problem {
        Problem { message: message.into(), path: None, line: None, column: None, label: None, help: None, flag: None }
    }

    pub fn in_flag(flag: &str, message: impl Into<String>) -> Problem {
        Problem { flag: Some(flag.to_string()), ..Problem::new(message) }
    }

    pub fn in_file(path: impl fmt::Display, message: impl Into<String>) -> Problem {
        Problem { path: Some(path.to_string()), ..Problem::new(message) }
    }

    /// The same problem, in the file at `path`.
    pub fn at(self, path: impl fmt::Display) -> Problem {
        Problem { path: Some(path.to_string()), ..self }
    }

    /// The same problem, on this line of its file.
    pub fn on_line(self, line: usize) -> Problem {
        Problem { line: (line > 0).then_some(line), ..self }
    }
}

impl From<&ScenarioError> for Problem {
    fn from(e: &ScenarioError) -> Problem {
        Problem {
            message: e.message.clone(),
            path: Some(e.path.clone()),
            // 0 means the whole file: no place in it.
            line: (e.line > 0).then_some(e.line),
            column: (e.line > 0 && e.col > 0).then_some(e.col),
            label: e.label.clone(),
            help: e.help.clone(),
            flag: None,
        }
    }
}

/// As a one-line report says it: `path:line:col: message; help`, the way
/// a scenario error says itself.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{path}")?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
                if let Some(col) = self.column {
                    write!(f, ":{col}")?;
                }
            }
            write!(f, ": ")?;
        }
        write!(f, "{}", self.message)?;
        if let Some(help) = &self.help {
            write!(f, "; {help}")?;
        }
        Ok(())
    }
}

/// A command's refusal: what stderr says, and the same for the error object.
#[derive(Debug)]
pub struct Refusal {
    /// stderr's words, exactly as without `--format json`.
    text: String,
    /// One line: what is wrong and what was not done.
    message: String,
    errors: Vec<Problem>,
}

impl Refusal {
    /// One problem, told on one line as `error: {line}`; `line` says what
    /// was not done as well.
    pub fn line(line: impl Into<String>, problem: Problem) -> Refusal {
        let message = line.into();
        Refusal { text: format!("error: {message}\n"), message, errors: vec![problem] }
    }

    /// One problem, told on stderr as `text` says it (with its line breaks).
    pub fn said(text: String, problem: Problem) -> Refusal {
        Refusal { message: text.trim_end().to_string(), text, errors: vec![problem] }
    }

    /// Problems in scenario files, laid out as rustc lays out its own, then
    /// `tail` (what was not done, and what to do). `not_done` ends the
    /// object's one-line message.
    pub fn files(errors: &[ScenarioError], not_done: &str, tail: &str) -> Refusal {
        let text = format!("{}{tail}\n", crate::diagnostic::render_all(errors, crate::diagnostic::stderr_color()));
        Refusal::problems(text, errors.iter().map(Problem::from).collect(), not_done)
    }

    /// Problems already put in words for stderr, `text` (with its line breaks).
    pub fn problems(text: String, errors: Vec<Problem>, not_done: &str) -> Refusal {
        let files: std::collections::BTreeSet<&str> = errors.iter().filter_map(|p| p.path.as_deref()).collect();
        let problems = crate::words::plural(errors.len() as u64, "problem");
        let message = match files.len() {
            0 => format!("{problems}; {not_done}"),
            n => format!("{problems} in {}; {not_done}", crate::words::plural(n as u64, "file")),
        };
        Refusal { text, message, errors }
    }

    /// Says it (stderr always; the error object on stdout with `--format
    /// json`) and gives the exit status: bad input.
    pub fn tell(self, format: Format) -> i32 {
        eprint!("{}", self.text);
        if format == Format::Json {
            print_json(&object(&self.message, &self.errors));
        }
        EXIT_BAD_INPUT
    }
}

/// The error object (docs/json.md, `$defs/error` in docs/report.schema.json).
pub fn object(message: &str, errors: &[Problem]) -> serde_json::Value {
    serde_json::json!({"error": {"kind": "bad_input", "message": message, "errors": errors}})
}

/// A document on stdout, as every report is printed.
pub fn print_json(doc: &serde_json::Value) {
    println!("{}", serde_json::to_string_pretty(doc).unwrap_or_default());
}

/// Whether the command line asks for `--format json`, read from the words
/// themselves: a command line clap refused has no parsed format to ask.
/// Words after `--` are operands, not options.
pub fn json_asked<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> bool {
    let words: Vec<std::ffi::OsString> = args.into_iter().skip(1).take_while(|w| w != "--").collect();
    words
        .iter()
        .enumerate()
        .any(|(i, w)| w == "--format=json" || (w == "--format" && words.get(i + 1).is_some_and(|v| v == "json")))
}

/// A command line clap refused (an unknown option, a value its parser
/// turned down: `--seeds 5..1`): said as clap says it, on stderr, and with
/// `--format json` as the error object on stdout too. `--help` and
/// `--version` are not errors: clap prints them and exits 0.
pub fn command_line(e: clap::Error, json: bool) -> i32 {
    if !e.use_stderr() {
        e.exit();
    }
    if json {
        let problem = clap_problem(&e);
        print_json(&object(&format!("{}; nothing was done", problem.message), &[problem]));
    }
    let _ = e.print();
    e.exit_code()
}

/// clap's error as a problem: its first line, the option it names, and its
/// tips as the help.
fn clap_problem(e: &clap::Error) -> Problem {
    use clap::error::{ContextKind, ContextValue};
    let said = e.render().to_string();
    let first = said.lines().next().unwrap_or_default();
    let message = first.strip_prefix("error: ").unwrap_or(first).to_string();
    let tips: Vec<&str> = said.lines().filter_map(|l| l.trim_start().strip_prefix("tip: ")).collect();
    // `--seeds <A..B>`: the option, without its value's name.
    let flag = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.split([' ', '=']).next().map(str::to_string),
        _ => None,
    };
    Problem { flag, help: (!tips.is_empty()).then(|| tips.join("; ")), ..Problem::new(message) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<std::ffi::OsString> {
        line.split_whitespace().map(Into::into).collect()
    }

    #[test]
    fn json_is_asked_by_the_option_not_by_a_word_that_looks_like_it() {
        assert!(json_asked(words("handshake run --format json")));
        assert!(json_asked(words("handshake run --seeds 5..1 --format=json")));
        assert!(!json_asked(words("handshake run --format text")));
        assert!(!json_asked(words("handshake run json --format")));
        assert!(!json_asked(words("handshake run -- --format json")));
    }

    #[test]
    fn a_scenario_error_is_the_same_problem_in_either_form() {
        let mut e = ScenarioError::whole_file("a.toml", "bad");
        assert_eq!(Problem::from(&e).to_string(), e.to_string());
        assert_eq!(Problem::from(&e).line, None);
        e.line = 3;
        e.col = 7;
        e.help("write it so");
        let p = Problem::from(&e);
        assert_eq!(p.to_string(), e.to_string());
        assert_eq!((p.line, p.column, p.help.as_deref()), (Some(3), Some(7), Some("write it so")));
    }
}
