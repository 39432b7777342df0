//! handshake: a deterministic simulator of the shutdown and plan-approval
//! handshakes that agent teams use to coordinate.
//!
//! The pure protocol core lives in [`protocol`] (messages, send rules, the
//! request table and its state machine, deadlines, the plan gate); what the
//! lead and teammates decide is in [`agent`]; [`team`] runs them as actix
//! actors on a virtual clock; [`oracle`] holds the invariants every run is
//! judged by, one file each; [`scenario`] reads scenario files and judges runs.
//!
//! Run a team from code: alice is writing a file when the lead asks her to
//! shut down; she approves, finishes the file, and stops.
//!
//! ```
//! use handshake::agent::{Script, TeammateSpec, WorkItem};
//! use handshake::protocol::{Action, AgentId, Kind, Millis, Status};
//! use handshake::team::{run, Step, TeamSpec};
//! use handshake::trace::RosterStatus;
//!
//! let alice = TeammateSpec {
//!     work: vec![WorkItem { action: Action::Write, path: Some("src/auth.rs".into()), steps: 4, step_time: Millis(500) }],
//!     ..TeammateSpec::default()
//! };
//! let mut team = TeamSpec::new(vec![("alice".to_string(), alice)]);
//! team.steps.push(Step {
//!     at: Millis(1000),
//!     agent: AgentId::LEAD,
//!     script: Script::Ask { kind: Kind::Shutdown, to: AgentId(1), words: None, label: Some("stop-alice".into()) },
//! });
//! let outcome = run(team);
//! assert_eq!(outcome.request("stop-alice").map(|r| r.status), Some(Status::Approved));
//! assert_eq!(outcome.status_of("alice"), Some(RosterStatus::Shutdown));
//! assert!(outcome.files["src/auth.rs"].is_complete());
//! ```
//!
//! Or a scenario file, as the `handshake run` command does:
//!
//! ```
//! use handshake::scenario::{load_str, run_scenario, RunOptions};
//!
//! let file = r#"
//! name = "keep"
//! about = "An unanswered shutdown request expires; with keep, alice stays up."
//! [policy]
//! on_shutdown_timeout = "keep"
//! [[teammate]]
//! name = "alice"
//! on_shutdown = "ignore"
//! [[step]]
//! at = "1s"
//! do = "shutdown"
//! to = "alice"
//! label = "stop-alice"
//! [[expect]]
//! request = "stop-alice"
//! status = "expired"
//! [[expect]]
//! teammate = "alice"
//! status = "idle"
//! "#;
//! let scenario = load_str("keep.toml", file).expect("a valid scenario");
//! let report = run_scenario(&scenario, 1, RunOptions::default());
//! assert!(report.passed, "{:?}", report.failures);
//! assert_eq!(report.virtual_ms, 61_000); // the 60 s timeout, in microseconds of real time
//! ```

pub mod agent;
pub mod bench;
pub mod cli;
pub mod color;
pub mod diagnostic;
pub mod explore;
pub mod explore_file;
pub mod fault_kind;
pub mod fnv;
pub mod format;
pub mod fuzz;
pub mod history;
pub mod inbox;
pub mod input;
pub mod interrupt;
pub mod oracle;
pub mod output;
pub mod process;
pub mod protocol;
pub mod scenario;
pub mod shrink;
pub mod sweep;
pub mod team;
pub mod trace;
pub mod view;
pub mod words;
pub mod world;
