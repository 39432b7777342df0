//! What `handshake watch` keeps of a live team folder: every entry it has
//! ever seen, in the order it first saw them, whatever the runtime does to
//! the files after (it rewrites each inbox whole, flips `read` flags, and
//! may delete the folder when the session ends). Memory grows with the
//! entries kept, which is the history's own size, not with how long it runs.

use super::folder::{Reading, Team};
use std::collections::{BTreeMap, BTreeSet};

/// Where a note on a followed transcript as a whole is placed (replaced
/// during the watch, unreadable at a look).
pub const TRANSCRIPT: &str = "transcript";

/// The note of a transcript replaced during a watch, `n` kept entries not
/// found in the file that took its place.
fn replaced_why(n: usize) -> String {
    format!(
        "the file was replaced or rewritten during the watch, and {} kept from before are not in it: what was \
         kept of both is judged as one history",
        crate::words::plural(n as u64, "entry")
    )
}

/// An entry's file, sender, text's digest and time, and which copy of
/// them it is in its file.
type Identity = (String, String, u64, i64, usize);

/// Every entry seen, once each.
#[derive(Debug, Default)]
pub struct Kept {
    /// The team, the entries kept, the latest reading's problems and the
    /// shapes seen: judged as they are, never copied.
    reading: Reading,
    /// Each entry's identity (its file, sender, text's digest and time,
    /// and which copy of them it is in its file) → its place in `entries`.
    index: BTreeMap<Identity, usize>,
    /// The team names config.json has given, in the order seen: more than
    /// one, and the folder held another team's files after the first's.
    names: Vec<String>,
    /// Entries kept from a transcript that a later file under its name (it
    /// was replaced, or rewritten) no longer held: past none, what was kept
    /// mixes two files, which is said.
    not_found_again: usize,
}

impl Kept {
    /// Takes in a new reading of the folder; true if anything is new (an
    /// entry, or a `read` flag set).
    pub fn absorb(&mut self, r: Reading) -> bool {
        let kept = &mut self.reading;
        // A second name was said when it came.
        let renamed_before = self.names.len() > 1;
        if let Some(name) = r.team.name.as_ref().filter(|n| !self.names.contains(n)) {
            self.names.push(name.clone());
        }
        if r.team != Team::default() {
            kept.team = r.team;
        }
        // An entry that could not be read stays said after a rewrite or a
        // drain drops it (it was there); a file's own problem (not JSON, a
        // link) is the latest reading's, and a transcript's list is whole.
        let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
        let before = std::mem::take(&mut kept.unjudged);
        // A problem not said before (a file gone unreadable) is news, as an
        // entry is: the watch judges again and says it.
        let mut changed = r.unjudged.iter().any(|u| !before.contains(u));
        let mut unjudged: Vec<(String, String)> = before
            .into_iter()
            .filter(|(place, _)| super::folder::entry_place(place).is_some())
            .filter(|u| seen.insert(u.clone()))
            .collect();
        unjudged.extend(r.unjudged.into_iter().filter(|u| seen.insert(u.clone())));
        if let [first, .., last] = self.names.as_slice() {
            // Not one team's history: said, so the verdict is no clean bill.
            let why = format!(
                "config.json named the team {first:?}, then {last:?}: another team's files came into the folder, \
                 and what was kept of both is judged as one history"
            );
            changed |= !renamed_before;
            unjudged.push(("config.json".into(), why));
        }
        if self.not_found_again > 0 {
            unjudged.push((TRANSCRIPT.into(), replaced_why(self.not_found_again)));
        }
        kept.unjudged = unjudged;
        kept.not_parsed = r.not_parsed;
        // The latest look's: whether it stopped at the folder's bound.
        kept.bounded = r.bounded;
        for (shape, n) in r.shapes {
            let kept = kept.shapes.entry(shape).or_default();
            *kept = (*kept).max(n);
        }
        // Unread entries kept that this reading's file no longer holds
        // (the shapes seen, this reading's merged in, tell msg_id's).
        let drains = kept.shapes.contains_key(super::folder::MSG_ID);
        let files_now: BTreeSet<String> = r
            .entries
            .iter()
            .filter(|e| e.origin.starts_with("inboxes/"))
            .map(|e| file_of(&e.origin).to_string())
            .collect();
        let mut present: BTreeSet<Identity> = BTreeSet::new();
        // Two identical entries in one file are two deliveries: counted.
        let mut copies: BTreeMap<(String, String, u64, i64), usize> = BTreeMap::new();
        for e in r.entries {
            let file = file_of(&e.origin).to_string();
            let base = (file, e.from.clone(), e.digest, e.at.ms);
            let n = copies.entry(base.clone()).or_default();
            *n += 1;
            let key = (base.0, base.1, base.2, base.3, *n);
            present.insert(key.clone());
            match self.index.get(&key) {
                Some(&i) => {
                    // A transcript's request learns its id when the call's
                    // result is written: the later reading knows more.
                    let was = &mut kept.entries[i];
                    if e.said != was.said {
                        was.said = e.said;
                        changed = true;
                    }
                    // Once queued, an entry was delivered: a flag set stays set.
                    if e.read == Some(true) && was.read != Some(true) {
                        was.read = Some(true);
                        changed = true;
                    }
                }
                None => {
                    self.index.insert(key, kept.entries.len());
                    kept.entries.push(e);
                    changed = true;
                }
            }
        }
        // Unread, and gone from its file at this look. Where the runtime
        // deletes entries as it delivers them (msg_id), that is delivery,
        // unless the file could not be parsed at this look (caught
        // mid-write; a review: its answer's request was said "never
        // answered"). Elsewhere, gone from a file still there is lost to a
        // rewrite. A look that stopped at the folder's bound did not read
        // every entry there is, and says neither (a review: a folder grown
        // past the bound had its unread entries called lost).
        if !kept.bounded {
            for (key, &i) in &self.index {
                let e = &mut kept.entries[i];
                if present.contains(key) || e.read == Some(true) || !e.origin.starts_with("inboxes/") {
                    continue;
                }
                if drains {
                    if e.read == Some(false) && !kept.not_parsed.contains(&key.0) {
                        e.read = Some(true);
                        changed = true;
                    }
                } else if files_now.contains(&key.0) {
                    let which = (e.origin.clone(), e.from.clone(), e.digest, e.at.ms);
                    if !kept.lost.contains(&which) {
                        kept.lost.push(which);
                        changed = true;
                    }
                }
            }
        }
        changed
    }

    /// Takes in a transcript read again from its start (rewritten, or
    /// another file under its name): its entries are keyed by their line,
    /// and a rewrite may move every line. An entry of `r` is the kept one
    /// that says the same (sender, text, time) as often before it, found
    /// again and keyed by its new line, so that the lines appended after are
    /// told apart from it; any other is new. True if anything is new.
    pub fn absorb_rewritten(&mut self, r: Reading) -> bool {
        type Said = (String, u64, i64);
        let said = |e: &super::folder::Entry| (e.from.clone(), e.digest, e.at.ms);
        // The kept transcript entries by what they say, in the order kept.
        let mut kept_as: BTreeMap<Said, Vec<Identity>> = BTreeMap::new();
        for (key, &i) in &self.index {
            kept_as.entry(said(&self.reading.entries[i])).or_default().push(key.clone());
        }
        for keys in kept_as.values_mut() {
            keys.sort_by_key(|k| self.index[k]);
        }
        let mut copies: BTreeMap<Said, usize> = BTreeMap::new();
        let mut moved = Vec::new();
        for e in &r.entries {
            let what = said(e);
            let n = copies.entry(what.clone()).or_default();
            *n += 1;
            if let Some(old) = kept_as.get(&what).and_then(|keys| keys.get(*n - 1)) {
                moved.push((old.clone(), (file_of(&e.origin).to_string(), what.0, what.1, what.2, 1), &e.origin));
            }
        }
        // Every old key out before any new one goes in: a line may move to
        // where another kept entry was.
        // A kept entry the new file does not say again: it was another file.
        let lost = self.index.len() - moved.len();
        self.not_found_again += lost;
        let places: Vec<_> = moved.iter().map(|(old, ..)| self.index.remove(old)).collect();
        for ((_, new, origin), i) in moved.into_iter().zip(places) {
            if let Some(i) = i {
                // Kept where it was (its place in the history), keyed anew.
                self.index.insert(new, i);
                self.reading.entries[i].origin = origin.clone();
            }
        }
        self.absorb(r) | (lost > 0)
    }

    /// Whether `r` lacks a file whose entries were kept: a listing taken
    /// while the runtime renames a rewritten inbox into place can miss it
    /// for a moment (a file emptied for good reads so too).
    pub fn misses_a_file(&self, r: &Reading) -> bool {
        let now: BTreeSet<&str> = r.entries.iter().map(|e| file_of(&e.origin)).collect();
        self.reading.entries.iter().any(|e| !now.contains(file_of(&e.origin)))
    }

    /// What has been kept, as one reading to judge.
    pub fn reading(&self) -> &Reading {
        &self.reading
    }

    pub fn len(&self) -> usize {
        self.reading.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.reading.entries.is_empty()
    }
}

/// The file an entry's place names: `inboxes/bob.json` of `inboxes/bob.json[3]`.
fn file_of(origin: &str) -> &str {
    super::folder::entry_place(origin).map_or(origin, |(file, _)| file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::claude::folder::Entry;
    use crate::history::claude::message::Said;
    use crate::history::stamp::Stamp;

    fn entry(n: usize, text: &str, read: bool) -> Entry {
        Entry {
            origin: format!("inboxes/team-lead.json[{n}]"),
            at: Stamp { ms: 1000 * n as i64, no_zone: false },
            from: "bob".into(),
            to: "team-lead".into(),
            said: crate::history::claude::message::read(text),
            digest: crate::history::claude::message::digest(text),
            read: Some(read),
        }
    }

    fn reading(entries: Vec<Entry>) -> Reading {
        Reading { entries, ..Reading::default() }
    }

    #[test]
    fn an_entry_that_could_not_be_read_stays_said_after_a_rewrite_drops_it_and_a_files_problem_does_not() {
        let mut k = Kept::default();
        let problem = |place: &str| (place.to_string(), "why".to_string());
        let mut first = reading(vec![entry(1, "a", true)]);
        first.unjudged = vec![problem("inboxes/bob.json[1]"), problem("inboxes/amy.json")];
        first.not_parsed = vec!["inboxes/amy.json".into()];
        k.absorb(first);
        // bob's inbox rewritten without the bad entry; amy's now parses.
        k.absorb(reading(vec![entry(1, "a", true)]));
        assert_eq!(k.reading().unjudged, vec![problem("inboxes/bob.json[1]")]);
        assert!(k.reading().not_parsed.is_empty());
        let mut again = reading(vec![]);
        again.unjudged = vec![problem("inboxes/bob.json[1]")];
        assert!(!k.absorb(again), "no entry and no problem is new");
        assert_eq!(k.reading().unjudged.len(), 1, "said once");
        // A file gone unreadable is news, once.
        let mut broken = reading(vec![entry(1, "a", true)]);
        broken.unjudged = vec![problem("inboxes/team-lead.json")];
        assert!(k.absorb(broken.clone()), "a new problem is news");
        assert!(!k.absorb(broken), "and only once");
    }

    /// A review: a folder grown past its bound between two looks had the
    /// unread entries of the file the bound cut called lost to a rewrite
    /// (a FAIL of no-silent-loss, where the look itself said it stopped).
    /// Only a look that read everything can tell an entry gone.
    #[test]
    fn a_look_stopped_at_the_bound_calls_nothing_lost() {
        let mut k = Kept::default();
        k.absorb(reading(vec![entry(1, "a", true), entry(2, "b", false)]));
        let mut cut = reading(vec![entry(1, "a", true)]);
        cut.bounded = true;
        k.absorb(cut);
        assert!(k.reading().lost.is_empty(), "{:?}", k.reading().lost);
        // Read whole, the same file without it has lost it.
        k.absorb(reading(vec![entry(1, "a", true)]));
        assert_eq!(k.reading().lost.len(), 1);
    }

    #[test]
    fn a_folder_that_holds_another_teams_files_after_the_first_says_so_once() {
        let mut k = Kept::default();
        let named = |name: &str| {
            let mut r = reading(vec![entry(1, "a", true)]);
            r.team.name = Some(name.into());
            r
        };
        k.absorb(named("clean"));
        assert!(k.reading().unjudged.is_empty());
        assert!(k.absorb(named("probe")), "another team is news");
        let said: Vec<&str> = k.reading().unjudged.iter().map(|(_, why)| why.as_str()).collect();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("config.json named the team \"clean\", then \"probe\": another team's"));
        assert!(!k.absorb(named("probe")), "said once");
        assert_eq!(k.reading().unjudged.len(), 1);
    }

    #[test]
    fn a_reading_without_a_kept_inbox_is_told_apart() {
        let mut k = Kept::default();
        let mut bobs = entry(1, "a", true);
        bobs.origin = "inboxes/bob.json[1]".into();
        k.absorb(reading(vec![bobs.clone(), entry(2, "b", false)]));
        assert!(!k.misses_a_file(&reading(vec![bobs, entry(2, "b", true)])));
        assert!(k.misses_a_file(&reading(vec![entry(2, "b", true)])), "bob.json is missing from this listing");
    }

    #[test]
    fn rewrites_flipped_flags_and_a_deleted_folder_lose_nothing() {
        let mut k = Kept::default();
        assert!(k.absorb(reading(vec![entry(1, "a", false)])));
        // Rewritten whole with one more entry and the first flag flipped.
        assert!(k.absorb(reading(vec![entry(1, "a", true), entry(2, "b", false)])));
        assert_eq!(k.len(), 2);
        assert_eq!(k.reading().entries[0].read, Some(true));
        // The same again: nothing new.
        assert!(!k.absorb(reading(vec![entry(1, "a", true), entry(2, "b", false)])));
        // The folder deleted: a reading of nothing keeps everything.
        assert!(!k.absorb(Reading::default()));
        assert_eq!(k.len(), 2);
        assert_eq!(k.reading().entries[1].said, Said::Plain);
        // Two identical entries in one file are two deliveries.
        assert!(k.absorb(reading(vec![entry(1, "a", true), entry(1, "a", true)])));
        assert_eq!(k.len(), 3);
    }
}
