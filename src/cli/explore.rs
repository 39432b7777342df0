//! `handshake explore`: every interleaving of one small scenario, within
//! fault budgets, and the shortest schedule that breaks an invariant.

use super::{Format, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK};
use crate::explore::{explore_with, Bounds, Budgets};
use crate::scenario::load_file;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ExploreArgs {
    /// One scenario file (keep it small: the states grow fast with each agent and message)
    pub path: PathBuf,
    /// Messages the explorer may drop, anywhere in any schedule
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub drop: u32,
    /// Messages the explorer may deliver twice
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub duplicate: u32,
    /// Teammates that may crash (each may then restart)
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub crash: u32,
    /// Messages the adversary may inject: any protocol message quoting an id seen on the wire, claiming any member
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub forge: u32,
    /// Stop exploring deeper than this many steps
    #[arg(long, default_value_t = Bounds::default().max_depth, value_name = "N")]
    pub max_depth: usize,
    /// Stop after this many distinct states
    #[arg(long, default_value_t = Bounds::default().max_states, value_name = "N")]
    pub max_states: usize,
    /// Explore every order of deliveries to different agents too (to measure what the reduction saves)
    #[arg(long)]
    pub no_partial_order: bool,
    /// Write the shortest counterexample to FILE as a scenario that `handshake run` replays (checked by running it)
    #[arg(long, value_name = "FILE")]
    pub write: Option<PathBuf>,
    /// Output for people (text) or machines (json)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub fn main(a: ExploreArgs) -> i32 {
    if a.max_depth == 0 || a.max_states == 0 {
        eprintln!("error: --max-depth and --max-states must be at least 1; nothing was explored");
        return EXIT_BAD_INPUT;
    }
    let scenario = match load_file(&a.path) {
        Ok(s) => s,
        Err(errors) => {
            for e in &errors {
                eprintln!("{e}");
            }
            eprintln!("nothing was explored: fix the file above");
            return EXIT_BAD_INPUT;
        }
    };
    let own = scenario.team.link_faults.len() + scenario.team.partitions.len() + scenario.team.timed.len();
    if own > 0 && a.format == Format::Text {
        println!(
            "note: the file's {own} [[fault]] {} not played: the explorer injects its own, anywhere \
             (--drop, --duplicate, --crash, --forge)",
            if own == 1 { "entry is" } else { "entries are" }
        );
    }
    let started = std::time::Instant::now();
    let budgets = Budgets { drop: a.drop, duplicate: a.duplicate, crash: a.crash, forge: a.forge };
    let bounds = Bounds {
        max_depth: a.max_depth,
        max_states: a.max_states,
        partial_order: !a.no_partial_order,
        ..Bounds::default()
    };
    // Progress only where someone watches: a terminal, and text output.
    let show = a.format == Format::Text && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut progress = |x: &crate::explore::Exploration| {
        if show {
            let secs = started.elapsed().as_secs_f64();
            eprint!("\r  {} states ({} unique), depth {}, {:.0} s…", x.states, x.unique, x.depth, secs);
        }
    };
    let x = explore_with(&scenario, budgets, bounds, &mut progress);
    if show && x.unique >= 10_000 {
        eprintln!();
    }
    let secs = started.elapsed().as_secs_f64();
    let rate = x.states as f64 / secs.max(1e-9);
    if a.format == Format::Json {
        let doc = serde_json::json!({
            "scenario": scenario.name,
            "states": x.states,
            "unique": x.unique,
            "depth": x.depth,
            "seconds": secs,
            "stopped_by": x.stopped_by,
            "partial_order_slept": x.slept,
            "violation": x.counterexample.as_ref().map(|c| serde_json::json!({
                "broke": c.broke.to_string(),
                "detail": c.detail,
                "schedule": c.actions,
                "events": c.narrate(),
            })),
        });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        println!(
            "explored {} states ({} unique), depth {}, {:.2} s ({:.0} states/s)",
            x.states, x.unique, x.depth, secs, rate
        );
        if !a.no_partial_order {
            println!(
                "partial order: {} transitions slept (deliveries to different agents commute; \
                 --no-partial-order explores them all)",
                x.slept
            );
        }
        if let Some(bound) = x.stopped_by {
            println!("stopped at --{bound}: states beyond it were not explored");
        }
        match &x.counterexample {
            None => println!("no invariant violated within the bounds"),
            Some(c) => {
                println!("✗ {} — {}", c.broke, c.detail);
                println!("  the shortest schedule that breaks it ({} steps):", c.actions.len());
                for step in &c.actions {
                    println!("    {step}");
                }
                println!("  what happens:");
                for line in c.narrate() {
                    println!("  {line}");
                }
            }
        }
    }
    if let (Some(c), Some(out)) = (&x.counterexample, &a.write) {
        let original = std::fs::read_to_string(&a.path).unwrap_or_default();
        let written = crate::explore::replay::scenario_file(&original, &out.to_string_lossy(), c)
            .and_then(|text| std::fs::write(out, text).map_err(|e| format!("cannot write {}: {e}", out.display())));
        match written {
            Ok(()) => eprintln!("wrote {}: `handshake run {} -v` replays the violation", out.display(), out.display()),
            Err(e) => eprintln!("no scenario written: {e}"),
        }
    }
    if x.counterexample.is_some() {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}
