//! Scenario-file problems laid out as rustc and cargo lay out theirs: the
//! message, where it is (` --> path:line:col`), the line with the offending
//! text underlined and labelled, and the fix on a `help:` line. The layout is
//! `annotate-snippets`, the crate rustc and cargo render with, so a Rust
//! user reads it as they read a compiler error.

use crate::format::ScenarioError;
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};

/// Whether stderr gets colour, as `--color` decided (`crate::color`).
pub fn stderr_color() -> bool {
    // As `--color` decided (auto: a terminal, NO_COLOR, CLICOLOR_FORCE).
    crate::color::stderr()
}

/// One problem, as rustc would print it, ending in a line break. `color`
/// adds rustc's colours (the caller decides: a terminal, `NO_COLOR`, a
/// `--color` flag).
pub fn render(e: &ScenarioError, color: bool) -> String {
    let renderer = if color { Renderer::styled() } else { Renderer::plain() };
    let title = Level::ERROR.primary_title(e.message.as_str());
    // A file's name is the user's text too: a newline or a terminal escape
    // in it is written as an escape, as a scenario's text is.
    let path = crate::input::shown(&e.path);
    let path = path.as_ref();
    let mut group = match (&e.excerpt, e.line) {
        (Some(x), line) if line > 0 && !x.cut_before => {
            let (text, span) = cut(x);
            let annotation = AnnotationKind::Primary.span(span).label(e.label.as_deref());
            title.element(Snippet::source(text).path(path).line_start(line).annotation(annotation))
        }
        // Cut from a long line: the column the excerpt would give is not the
        // file's, so the place is given as the file has it.
        (Some(x), line) if line > 0 => {
            let origin = Origin::path(path).line(line).char_column(e.col);
            let (text, span) = cut(x);
            let annotation = AnnotationKind::Primary.span(span).label(e.label.as_deref());
            title.element(origin).element(Snippet::source(text).line_start(line).annotation(annotation))
        }
        _ => title.element(Origin::path(path)),
    };
    if let Some(h) = &e.help {
        group = group.element(Level::HELP.message(h.as_str()));
    }
    let report: [Group<'_>; 1] = [group];
    let mut out = renderer.render(&report);
    if e.excerpt.as_ref().is_some_and(|x| x.cut_before) {
        out = without_second_origin(&out);
    }
    out.push('\n');
    out
}

/// A snippet after an origin is drawn as from a second file, under a bare
/// `:::` line; here both are the same place, so that line goes (it is the
/// fourth: the title, `-->`, a gutter, `:::`).
fn without_second_origin(out: &str) -> String {
    let mut lines: Vec<&str> = out.split('\n').collect();
    if lines.get(3).is_some_and(|l| l.contains(":::") && !l.chars().any(char::is_alphanumeric)) {
        lines.remove(3);
    }
    lines.join("\n")
}

/// Every problem, one after another with a blank line between, as cargo
/// prints a build's errors.
pub fn render_all(errors: &[ScenarioError], color: bool) -> String {
    errors.iter().map(|e| render(e, color)).collect::<Vec<_>>().join("\n")
}

/// A cut excerpt with `...` where the line goes on.
fn cut(x: &crate::format::build::Excerpt) -> (String, std::ops::Range<usize>) {
    let before = if x.cut_before { "..." } else { "" };
    let after = if x.cut_after { "..." } else { "" };
    let shift = before.len();
    (format!("{before}{}{after}", x.text), x.span.start + shift..x.span.end + shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_name_that_would_drive_the_terminal_is_shown_escaped() {
        let e = ScenarioError::whole_file("a\u{1b}[31mRED\u{1b}[0m\nb.toml", "bad");
        let out = render(&e, false);
        assert!(!out.contains('\u{1b}'), "{out:?}");
        assert!(out.contains("--> a\\u{1b}[31mRED\\u{1b}[0m\\nb.toml"), "{out}");
        assert_eq!(out.lines().count(), 2, "one line for the place: {out:?}");
    }
}
