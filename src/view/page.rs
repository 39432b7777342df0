//! The stepping page of one scenario run, for the commands that make a run
//! to look at (`explore --html`, `shrink --html`) as `run --html` does.

use crate::scenario::{run_scenario, RunOptions, Scenario};

/// One run as `--html` writes it: played with `seed` (and `schedule`, if
/// given) keeping the simulator's frames, so the page steps through it.
pub fn stepping_page(
    s: &Scenario,
    seed: u64,
    schedule: Option<crate::world::Schedule>,
    title: &str,
    reproduce: &str,
) -> Result<String, String> {
    let opts = RunOptions { keep_outcome: true, frames: true, schedule, ..RunOptions::default() };
    let mut report = run_scenario(s, seed, opts);
    let outcome = report.outcome.take().ok_or("the run kept no outcome")?;
    if let Some(why) = &outcome.schedule_error {
        return Err(format!("the actors could not follow the schedule: {why}"));
    }
    let svg = super::svg(&outcome, &super::ViewOptions::titled(title));
    let page = super::html::Page { about: &s.about, report: &report, reproduce, svg: &svg };
    Ok(super::html::html(&outcome, &page))
}
