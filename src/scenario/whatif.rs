//! One `[policy]` setting changed in a scenario file's text, for `run
//! --compare 'sender_auth=false'`: the same file played again with it, so
//! a learner sees what a defence does by turning it off.
//!
//! The change is made to the file's typed document ([`scenario_with`]): the
//! file is read as any file is, the setting is read by the same reader (as a
//! `[policy]` of its own, so it gets every check a file's value gets), set in
//! the document, and the document built. A problem with the setting names the
//! setting; one with the file names the line it is on in the file.
//!
//! [`apply`] makes the same change to the text instead, keeping the file's
//! comments and layout, for what writes the changed file out (fuzz's finding
//! files, whose defences it switches back on).

use crate::format::file::{read, PolicyDoc};
use crate::format::{load_doc, Scenario};

/// `key=value`: a key of `[policy]` or of a table in it (`defences.sender_auth`,
/// `policy.` in front allowed) and a TOML value (`false`, `3`, `"30s"`; a
/// bare word that is not TOML is taken as a string, so
/// `shutdown_timeout=30s` works).
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// The tables under `[policy]` the key is in: none, or `["defences"]`.
    pub table: Vec<String>,
    pub key: String,
    pub value: toml::Value,
}

/// The tables a bare key is looked for in, in order: `sender_auth=false`
/// means `[policy.defences] sender_auth = false`, as no `[policy]` key has that name.
pub const TABLES: [&[&str]; 2] = [&[], &["defences"]];

impl Setting {
    pub fn parse(s: &str) -> Result<Setting, String> {
        let (key, value) = s
            .split_once('=')
            .ok_or_else(|| format!("{s:?}: write KEY=VALUE, a [policy] setting, e.g. 'sender_auth=false'"))?;
        let key = key.trim();
        let path = key.strip_prefix("policy.").unwrap_or(key);
        let mut parts: Vec<String> = path.split('.').map(str::to_string).collect();
        let bare = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !parts.iter().all(|p| bare(p)) {
            return Err(format!(
                "{key:?} is not a [policy] key (only [policy] settings can be compared, e.g. 'sender_auth=false')"
            ));
        }
        let key = parts.pop().unwrap_or_default();
        let raw = value.trim();
        if raw.is_empty() {
            return Err(format!("{s:?}: give {key} a value, e.g. '{key}=false'"));
        }
        let value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
            Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(raw.to_string())),
            Err(_) => toml::Value::String(raw.to_string()),
        };
        Ok(Setting { table: parts, key, value })
    }

    /// The same setting in another table under `[policy]`.
    pub fn in_table(&self, table: &[&str]) -> Setting {
        Setting { table: table.iter().map(|t| t.to_string()).collect(), ..self.clone() }
    }

    /// The table's header: `[policy]`, `[policy.defences]`.
    fn header(&self) -> String {
        std::iter::once("policy").chain(self.table.iter().map(String::as_str)).collect::<Vec<_>>().join(".")
    }

    /// As it is written on the command line and in the page: `sender_auth=false`.
    pub fn words(&self) -> String {
        let v = match &self.value {
            toml::Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        let mut path = self.table.clone();
        path.push(self.key.clone());
        format!("{}={v}", path.join("."))
    }
}

/// The scenario `source` describes, with `setting` made in its `[policy]`
/// (see the module's words). `Err` says what could not be read, and where.
pub fn scenario_with(path: &str, source: &str, setting: &Setting) -> Result<Scenario, String> {
    let said =
        |errors: Vec<crate::format::ScenarioError>| errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n");
    let mut doc = match read(source) {
        Ok((doc, problems)) if problems.is_empty() => doc,
        _ => return Err(said(crate::format::load_str(path, source).err().unwrap_or_default())),
    };
    let value = setting_doc(setting)?;
    if setting.table.is_empty() {
        overlay(&mut doc.policy, value);
    } else {
        // The reader has checked the setting: a switch, true or false.
        let on = setting.value.as_bool().ok_or_else(|| format!("{} is true or false", setting.key))?;
        let now = doc.policy.defences.unwrap_or_default();
        doc.policy.defences =
            Some(now.with_switch(&setting.key, on).ok_or_else(|| format!("{} is not a defence", setting.key))?);
    }
    // The changed run is compared with the file's, not judged by the file's
    // expectations, which describe the file's own run: one expecting the
    // violation a switched-off defence lets through would be refused once
    // the defence is back on. The oracle still judges it.
    doc.expects.clear();
    load_doc(path, source, doc).map_err(said)
}

/// The file at `path` (its text `source`) with the setting `words` made, as
/// `run --compare` and the by-hand page's "what if" take one: a bare key is
/// looked for in `[policy]`, then in the tables under it
/// (`sender_auth=false` is `defences.sender_auth=false`). The table that
/// knows the key says what is wrong with its value; one that does not only
/// says it has no such key (`sender_auth=maybe` was blamed on `[policy]`,
/// which has none, not on the value). A key no table knows is `[policy]`'s
/// error, which lists its keys.
pub fn scenario_with_words(path: &str, source: &str, words: &str) -> Result<(Scenario, Setting), String> {
    let asked = Setting::parse(words)?;
    let tries: Vec<Setting> =
        if asked.table.is_empty() { TABLES.iter().map(|t| asked.in_table(t)).collect() } else { vec![asked] };
    let knows = |s: &Setting| match s.table.as_slice() {
        [] => crate::format::file::policy_keys().contains(&s.key.as_str()),
        [t] if t == "defences" => crate::format::file::defence_names().contains(&s.key),
        _ => false,
    };
    let mut errors = Vec::new();
    for setting in tries {
        match scenario_with(path, source, &setting) {
            Ok(s) => return Ok((s, setting)),
            Err(said) => errors.push((knows(&setting), setting, said)),
        }
    }
    let best = errors.iter().find(|(known, ..)| *known).or(errors.first());
    Err(best
        .map(|(_, setting, said)| format!("with {} the file does not read:\n{said}", setting.words()))
        .unwrap_or_default())
}

/// The setting as a `[policy]` of its own, read by the file reader: a key
/// the table does not have, or a value it does not take, is said as a file's
/// would be (the caller names the setting: no line of the file is wrong).
fn setting_doc(setting: &Setting) -> Result<PolicyDoc, String> {
    let text = format!("name = \"compare\"\n[{}]\n{} = {}\n", setting.header(), setting.key, setting.value);
    match read(&text) {
        Ok((doc, problems)) if problems.is_empty() => Ok(doc.policy),
        Ok((_, problems)) => {
            let p = &problems[0];
            let help = p.help.as_deref().map(|h| format!("\n  help: {h}")).unwrap_or_default();
            Err(format!("{}{help}", p.message))
        }
        Err(p) => Err(p.message),
    }
}

/// Each `[policy]` key `over` sets, set in `into`. Every field is named, so
/// a key added to the policy is a compile error here until it is merged.
fn overlay(into: &mut PolicyDoc, over: PolicyDoc) {
    let PolicyDoc {
        timeouts_by_kind,
        on_expiry,
        strict_hierarchy,
        latency,
        defences,
        timeouts,
        deadlocks,
        mailbox,
        drain,
        inbox_poll,
        read_cost,
        read_cost_per_kib,
        prune,
        lock,
        mark_read,
        recipients,
    } = over;
    fn set<T>(into: &mut Option<T>, over: Option<T>) {
        if over.is_some() {
            *into = over;
        }
    }
    for (i, t) in timeouts_by_kind.into_iter().enumerate() {
        set(&mut into.timeouts_by_kind[i], t);
    }
    for (i, d) in on_expiry.into_iter().enumerate() {
        set(&mut into.on_expiry[i], d);
    }
    set(&mut into.strict_hierarchy, strict_hierarchy);
    set(&mut into.latency, latency);
    set(&mut into.defences, defences);
    set(&mut into.timeouts, timeouts);
    set(&mut into.deadlocks, deadlocks);
    set(&mut into.mailbox, mailbox);
    set(&mut into.drain, drain);
    set(&mut into.inbox_poll, inbox_poll);
    set(&mut into.read_cost, read_cost);
    set(&mut into.read_cost_per_kib, read_cost_per_kib);
    set(&mut into.prune, prune);
    set(&mut into.lock, lock);
    set(&mut into.mark_read, mark_read);
    set(&mut into.recipients, recipients);
}

/// The file's text with `setting` made in its `[policy]` table, its
/// comments and layout kept (for a changed file written out).
pub fn apply(source: &str, setting: &Setting) -> Result<String, String> {
    let line = format!("{} = {}", setting.key, setting.value);
    let lines: Vec<&str> = source.lines().collect();
    let header = |l: &str| l.split('#').next().unwrap_or("").trim().to_string();
    let table = format!("[{}]", setting.header());
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    match lines.iter().position(|l| header(l) == table) {
        Some(at) => {
            let end = lines[at + 1..]
                .iter()
                .position(|l| l.trim_start().starts_with('['))
                .map_or(lines.len(), |i| at + 1 + i);
            let own = (at + 1..end)
                .find(|&i| lines[i].split_once('=').is_some_and(|(k, _)| k.trim().trim_matches('"') == setting.key));
            match own {
                Some(i) => out[i] = line,
                None => out.insert(at + 1, line),
            }
        }
        None => {
            out.push(String::new());
            out.push(table.clone());
            out.push(line);
        }
    }
    let mut text = out.join("\n");
    text.push('\n');
    // The edit is made to lines; the TOML reader says whether it made what was meant.
    let parsed: toml::Table = toml::from_str(&text).map_err(|e| format!("the changed file is not TOML: {e}"))?;
    let mut made = parsed.get("policy");
    for t in &setting.table {
        made = made.and_then(|p| p.get(t));
    }
    if made.and_then(|p| p.get(&setting.key)) != Some(&setting.value) {
        return Err(format!(
            "cannot set {} in this file's {table} (is it written inline, or the value across lines?)",
            setting.key
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_reads_its_value_as_toml_or_else_as_words() {
        let s = Setting::parse("sender_auth=false").unwrap();
        assert_eq!((s.key.as_str(), &s.value), ("sender_auth", &toml::Value::Boolean(false)));
        let s = Setting::parse("policy.shutdown_timeout=30s").unwrap();
        assert_eq!((s.key.as_str(), &s.value), ("shutdown_timeout", &toml::Value::String("30s".into())));
        assert_eq!(s.words(), "shutdown_timeout=30s");
        assert!(Setting::parse("sender_auth").unwrap_err().contains("KEY=VALUE"));
        let s = Setting::parse("policy.defences.sender_auth=false").unwrap();
        assert_eq!((s.table.as_slice(), s.key.as_str()), (&["defences".to_string()][..], "sender_auth"));
        assert_eq!(s.words(), "defences.sender_auth=false");
        assert!(Setting::parse("a..b=x").unwrap_err().contains("[policy]"));
        assert!(Setting::parse("sender_auth=").unwrap_err().contains("a value"));
    }

    const FILE: &str = "name = \"x\"\n[policy]\nlatency = \"5ms\"\n[policy.defences]\nkind_check = false\n[[teammate]]\nname = \"alice\"\n";

    #[test]
    fn a_setting_is_made_in_the_document_and_keeps_the_rest() {
        let s = scenario_with("x.toml", FILE, &Setting::parse("defences.sender_auth=false").unwrap()).unwrap();
        let d = s.policy().defences;
        assert!(!d.sender_auth && !d.kind_check && d.sender_check, "{d:?}");
        let s = scenario_with("x.toml", FILE, &Setting::parse("shutdown_timeout=7s").unwrap()).unwrap();
        assert_eq!(s.policy().timeout(crate::protocol::Kind::Shutdown), crate::protocol::Millis(7000));
        assert!(!s.policy().defences.kind_check, "the file's own settings stay");
        let s = scenario_with("x.toml", FILE, &Setting::parse("defences.kind_check=true").unwrap()).unwrap();
        assert!(s.policy().defences.kind_check);
    }

    #[test]
    fn a_bad_setting_is_said_as_the_reader_says_a_bad_value_without_a_line() {
        let e = scenario_with("x.toml", FILE, &Setting::parse("latency=5").unwrap()).unwrap_err();
        assert!(e.contains("`latency` must be a duration") && e.contains("help:") && !e.contains("x.toml:"), "{e}");
        let e = scenario_with("x.toml", FILE, &Setting::parse("latncy=5ms").unwrap()).unwrap_err();
        assert!(e.contains("did you mean `latency`"), "{e}");
        // A bare key of the defences is not a [policy] key: the caller tries the tables in turn.
        assert!(scenario_with("x.toml", FILE, &Setting::parse("sender_auth=false").unwrap()).is_err());
        // What the file itself gets wrong names its line in the file.
        let bad = FILE.replace("name = \"alice\"", "name = \"alice\"\non_shutdown = \"maybe\"");
        let e = scenario_with("x.toml", &bad, &Setting::parse("shutdown_timeout=7s").unwrap()).unwrap_err();
        assert!(e.contains("x.toml:8:"), "{e}");
    }

    #[test]
    fn the_setting_replaces_its_line_or_joins_the_policy_table() {
        let s = Setting::parse("sender_auth=false").unwrap();
        let file = "name = \"x\"\n[policy]\nsender_auth = true # on\nlatency = \"1ms\"\n[[teammate]]\nname = \"a\"\n";
        let changed = apply(file, &s).unwrap();
        assert_eq!(changed, file.replace("sender_auth = true # on", "sender_auth = false"));
        let file = "name = \"x\"\n[policy]\nlatency = \"1ms\"\n";
        assert_eq!(apply(file, &s).unwrap(), "name = \"x\"\n[policy]\nsender_auth = false\nlatency = \"1ms\"\n");
        let file = "name = \"x\"\n[[teammate]]\nname = \"a\"\n";
        assert!(apply(file, &s).unwrap().ends_with("\n[policy]\nsender_auth = false\n"));
        assert!(apply("policy = { latency = \"1ms\" }\n", &s).is_err(), "an inline table cannot be edited by line");
        let d = s.in_table(&["defences"]);
        let file = "name = \"x\"\n[policy]\nlatency = \"1ms\"\n[policy.defences]\nsender_auth = true\n";
        assert_eq!(apply(file, &d).unwrap(), file.replace("sender_auth = true", "sender_auth = false"));
        let file = "name = \"x\"\n[policy]\nlatency = \"1ms\"\n";
        assert!(apply(file, &d).unwrap().ends_with("[policy.defences]\nsender_auth = false\n"));
    }
}
