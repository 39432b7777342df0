//! A schedule: the choices one run takes at every tie, written down so that
//! another shell can take the same ones. The explorer writes the schedule of
//! a counterexample it found; `handshake run FILE --schedule S` makes the
//! actors take exactly those choices, over the same world, and so reach the
//! same violation.
//!
//! The format is JSON Lines: a header, then one choice a line, agents by
//! name and messages by their router number (`#N` in the trace):
//!
//! ```text
//! {"handshake_schedule":1,"seed":42,"file_faults":true}
//! {"at":"1s","choice":"fire","owner":"lead","what":"lead takes its next scripted step"}
//! {"at":"1s","choice":"deliver","seq":2,"what":"deliver shutdown_request [stop-alice] from lead to alice"}
//! {"at":"1s","choice":"inject","from":"lead","to":"alice","message":{"type":"shutdown_request","request_id":"…"}}
//! ```
//!
//! `at` and `what` are for the reader; the choice is what counts. A header
//! with `"expect":true` says the explorer judged the file's `[[expect]]`
//! entries at the schedule's end (`explore --expect`), so `run --schedule`
//! judges them too; without it, `run` judges the path as the explorer did:
//! by the invariants, a violation the file expects allowed, not required.

use super::Choice;
use crate::protocol::{AgentId, Millis};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The format's version, written in the header.
pub const VERSION: u64 = 1;

/// A run's choices, and what the world they were taken in was made of.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// The seed the agents' request ids were drawn with.
    pub seed: u64,
    /// Whether the file's own faults were in the world.
    pub file_faults: bool,
    /// Whether the schedule was judged by the file's `[[expect]]` entries
    /// as well as by the invariants (`explore --expect`). A schedule is one
    /// path, not the file's own run: the entries describe that run, so
    /// without `--expect` neither the explorer nor `run --schedule` holds
    /// the path to them.
    pub expectations: bool,
    /// The file it was taken in, as a sweep's report records one (FNV-1a,
    /// 16 hex digits), when the explorer wrote it down: a run of another
    /// file, or of this one changed since, is told so.
    pub file: Option<String>,
    pub choices: Vec<Choice>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    handshake_schedule: u64,
    seed: u64,
    file_faults: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    /// Written only when true, so a schedule judged by the invariants alone
    /// reads as it always has.
    #[serde(default, rename = "expect", skip_serializing_if = "std::ops::Not::not")]
    expectations: bool,
}

impl Schedule {
    /// The schedule as JSON Lines, with `names` for the agents and, beside
    /// each choice, when it was taken and what it did (`notes`, one a choice).
    pub fn to_text(&self, names: &[String], notes: &[(Millis, String)]) -> String {
        let header = Header {
            handshake_schedule: VERSION,
            seed: self.seed,
            file_faults: self.file_faults,
            file: self.file.clone(),
            expectations: self.expectations,
        };
        // An invariant: these are plain data, which serde_json always writes.
        let mut out = serde_json::to_string(&header).expect("a header serializes");
        out.push('\n');
        let name = |a: AgentId| names.get(a.index()).cloned().unwrap_or_else(|| format!("agent-{}", a.0));
        for (i, c) in self.choices.iter().enumerate() {
            // A line names agents: the same choice, by name.
            let named: Choice<String> = c.named(|a| name(*a), |m| *m);
            let mut line = serde_json::Map::new();
            if let Some((at, what)) = notes.get(i) {
                line.insert("at".into(), Value::String(at.to_string()));
                line.insert("what".into(), Value::String(what.clone()));
            }
            if let Ok(Value::Object(fields)) = serde_json::to_value(&named) {
                line.extend(fields);
            }
            out.push_str(&Value::Object(line).to_string());
            out.push('\n');
        }
        out
    }

    /// Reads a schedule written by [`Schedule::to_text`], naming agents as
    /// `names` does. The error says which line and why.
    pub fn parse(text: &str, names: &[String]) -> Result<Schedule, String> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let (_, first) = lines.next().ok_or("the schedule is empty: its first line is the header")?;
        let header: Header = serde_json::from_str(first).map_err(|e| {
            format!("line 1: not a schedule header ({e}); it reads {{\"handshake_schedule\":1,\"seed\":N,\"file_faults\":true}}")
        })?;
        if header.handshake_schedule != VERSION {
            return Err(format!(
                "line 1: schedule format {} (this handshake reads format {VERSION})",
                header.handshake_schedule
            ));
        }
        let agent = |n: &str, line: usize| -> Result<AgentId, String> {
            let team = names.len().saturating_sub(1);
            names[..team].iter().position(|x| x == n).map(|i| AgentId(i as u32)).ok_or_else(|| {
                format!("line {line}: no agent named {n:?} in this team (it has {})", names[..team].join(", "))
            })
        };
        let mut choices = Vec::new();
        for (i, text) in lines {
            let line = i + 1;
            let mut value: Value = serde_json::from_str(text).map_err(|e| format!("line {line}: not JSON ({e})"))?;
            if let Value::Object(fields) = &mut value {
                fields.remove("at");
                fields.remove("what");
            }
            let named: Choice<String> =
                serde_json::from_value(value).map_err(|e| format!("line {line}: not a choice ({e})"))?;
            choices.push(named.map(|a| agent(a, line), |m| Ok(*m))?);
        }
        Ok(Schedule {
            seed: header.seed,
            file_faults: header.file_faults,
            expectations: header.expectations,
            file: header.file,
            choices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Message, RequestId};

    fn names() -> Vec<String> {
        ["lead", "alice", "adversary"].map(String::from).to_vec()
    }

    #[test]
    fn a_schedule_reads_back_as_written() {
        let id: RequestId = serde_json::from_str("\"90e8c98d-61a8-4fb7-9d35-60a5d2a2ba2a\"").expect("a uuid");
        let s = Schedule {
            seed: 42,
            file_faults: true,
            expectations: false,
            file: None,
            choices: vec![
                Choice::Fire { owner: AgentId(0) },
                Choice::Deliver { msg: 2 },
                Choice::Drop { msg: 3 },
                Choice::Duplicate { msg: 4 },
                Choice::Crash { agent: AgentId(1), restart: true },
                Choice::Restart { agent: AgentId(1) },
                Choice::Inject {
                    from: AgentId(0),
                    to: AgentId(1),
                    message: Message::Response {
                        kind: crate::protocol::Kind::Shutdown,
                        request_id: id,
                        approve: true,
                        words: None,
                    },
                },
                Choice::Wait { at: Millis(1500) },
            ],
        };
        let text = s.to_text(&names(), &[(Millis(1000), "timer of lead".into())]);
        assert!(text.starts_with("{\"handshake_schedule\":1,\"seed\":42,\"file_faults\":true}\n"), "{text}");
        assert!(text.contains("\"what\":\"timer of lead\""), "{text}");
        assert_eq!(Schedule::parse(&text, &names()), Ok(s.clone()));
        // Judged by the file's expectations too: said in the header, read back.
        let judged = Schedule { expectations: true, ..s };
        let text = judged.to_text(&names(), &[]);
        assert!(text.starts_with("{\"handshake_schedule\":1,\"seed\":42,\"file_faults\":true,\"expect\":true}\n"));
        assert_eq!(Schedule::parse(&text, &names()), Ok(judged.clone()));
        // The file it was taken in, by its hash: read back.
        let from = Schedule { file: Some("0123456789abcdef".into()), ..judged };
        let text = from.to_text(&names(), &[]);
        assert!(text.starts_with(
            "{\"handshake_schedule\":1,\"seed\":42,\"file_faults\":true,\"file\":\"0123456789abcdef\",\"expect\":true}\n"
        ));
        assert_eq!(Schedule::parse(&text, &names()), Ok(from));
    }

    #[test]
    fn a_bad_line_is_named_with_the_reason() {
        let head = "{\"handshake_schedule\":1,\"seed\":1,\"file_faults\":false}\n";
        let e = Schedule::parse(&format!("{head}{{\"choice\":\"fire\",\"owner\":\"bob\"}}\n"), &names()).unwrap_err();
        assert!(e.starts_with("line 2: no agent named \"bob\"") && e.contains("lead, alice"), "{e}");
        let e = Schedule::parse(&format!("{head}{{\"choice\":\"teleport\"}}\n"), &names()).unwrap_err();
        assert!(e.starts_with("line 2: not a choice"), "{e}");
        let e = Schedule::parse("{\"handshake_schedule\":9,\"seed\":1,\"file_faults\":false}\n", &names()).unwrap_err();
        assert!(e.contains("format 9"), "{e}");
        assert!(Schedule::parse("", &names()).unwrap_err().contains("empty"));
        // The adversary is not a member: no choice names it.
        let e = Schedule::parse(&format!("{head}{{\"choice\":\"restart\",\"agent\":\"adversary\"}}\n"), &names());
        assert!(e.unwrap_err().contains("no agent named \"adversary\""));
    }
}
