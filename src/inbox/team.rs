//! Claude Code's team folder as the `claude-code` mailbox world writes it:
//! `config.json` and `inboxes/<name>.json`, each inbox one JSON array of
//! entries `{from, text, timestamp, read}`, indented by two spaces as the
//! runtime writes them (docs/claude-code-runtime.md gives the version and
//! the evidence). Pure: text in, bytes out; the world decides what the
//! entries are, the command line where the bytes go.

use crate::protocol::Millis;
use serde_json::{json, Value};

/// Virtual time 0 as a wall-clock time, 2026-01-01T00:00:00Z: every
/// timestamp a run writes is this plus the run's clock, so the same run
/// writes the same folder, byte for byte.
pub const EPOCH_MS: i64 = 1_767_225_600_000;

/// The lead's name in a Claude Code team (`leadAgentId` is `team-lead@<team>`).
pub const LEAD_NAME: &str = "team-lead";

/// The team's name in the folder a run writes.
pub const TEAM_NAME: &str = "handshake";

/// `at` as the runtime writes a time: ISO 8601, milliseconds, UTC.
pub fn timestamp(at: Millis) -> String {
    let ms = EPOCH_MS.saturating_add(i64::try_from(at.0).unwrap_or(i64::MAX / 2));
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(t) => format!("{t:.3}"),
        Err(_) => "9999-12-31T23:59:59.999Z".to_string(),
    }
}

/// The inbox file of `name`, inside the team folder.
pub fn inbox_path(name: &str) -> String {
    format!("inboxes/{name}.json")
}

/// One entry of an inbox, as written.
pub struct Written<'a> {
    pub from: &'a str,
    pub text: &'a str,
    pub at: Millis,
    pub read: bool,
}

/// An inbox's bytes: the JSON array of its entries.
pub fn array<'a>(entries: impl Iterator<Item = Written<'a>>) -> Vec<u8> {
    let values: Vec<Value> = entries
        .map(|e| json!({"from": e.from, "text": e.text, "timestamp": timestamp(e.at), "read": e.read}))
        .collect();
    pretty(&Value::Array(values))
}

/// `config.json`: the team, its lead and its members (the lead first, as
/// the runtime lists it), `planModeRequired` for those who must have their
/// plans approved first.
pub fn config(lead: &str, members: &[(String, bool)]) -> Vec<u8> {
    let member = |name: &str, plan: bool, lead: bool| {
        json!({
            "agentId": format!("{name}@{TEAM_NAME}"),
            "name": name,
            "agentType": if lead { "team-lead" } else { "general-purpose" },
            "planModeRequired": plan,
            "joinedAt": EPOCH_MS,
            "backendType": "in-process",
            "isActive": true,
        })
    };
    let mut all = vec![member(lead, false, true)];
    all.extend(members.iter().map(|(n, plan)| member(n, *plan, false)));
    pretty(&json!({
        "name": TEAM_NAME,
        "description": "written by handshake (mailbox = \"claude-code\")",
        "createdAt": EPOCH_MS,
        "leadAgentId": format!("{lead}@{TEAM_NAME}"),
        "members": all,
    }))
}

fn pretty(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).unwrap_or_default();
    out.push(b'\n');
    out
}

/// What writing an inbox of `entries` entries of `text_bytes` bytes of text
/// costs on disk: the text plus each entry's frame (keys, timestamp, flag,
/// indentation). The read and the rewrite cost is counted on this.
pub fn array_bytes(entries: u64, text_bytes: u64, from_bytes: u64) -> u64 {
    const FRAME: u64 = 96;
    2 + entries * FRAME + text_bytes + from_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timestamp_reads_back_to_its_millisecond() {
        for at in [0, 1, 999, 1_001, 3_600_000, 86_400_123] {
            let t = timestamp(Millis(at));
            assert!(t.ends_with('Z') && t.contains('.'), "{t}");
            assert_eq!(t.parse::<jiff::Timestamp>().unwrap().as_millisecond(), EPOCH_MS + at as i64, "{t}");
        }
        assert_eq!(timestamp(Millis(1_001)), "2026-01-01T00:00:01.001Z");
    }

    #[test]
    fn an_array_is_json_with_the_runtime_fields() {
        let e = [Written { from: "team-lead", text: "{\"type\":\"x\"}", at: Millis(5), read: true }];
        let bytes = array(e.into_iter());
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v[0]["from"], "team-lead");
        assert_eq!(v[0]["read"], true);
        assert_eq!(v[0]["timestamp"], "2026-01-01T00:00:00.005Z");
        assert!(String::from_utf8(bytes).unwrap().contains("\n  {"), "two-space indent");
    }

    #[test]
    fn the_config_names_the_lead_and_each_member() {
        let v: Value = serde_json::from_slice(&config("team-lead", &[("alice".into(), true)])).unwrap();
        assert_eq!(v["leadAgentId"], "team-lead@handshake");
        assert_eq!(v["members"][1]["name"], "alice");
        assert_eq!(v["members"][1]["planModeRequired"], true);
    }
}
