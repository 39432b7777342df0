//! Reading an inbox file, as its owner does: two ways to drain it.
//!
//! A read is two steps with a gap between them, because that gap is where the
//! reference course loses messages: [`begin_read`] returns the lines and a
//! token, [`finish_read`] takes the token and makes the read stick (truncates
//! the file, or commits an offset). The simulator lets senders append between
//! the two steps; a reader that crashes between them never finishes, and its
//! lines are read again after the restart (at least once, never lost).
//!
//! - [`Drain::ReadThenTruncate`] is the reference's `read_inbox`: read the
//!   whole file, then empty it. A line appended between the read and the
//!   truncate is destroyed without ever being read. [`finish_read`] reports
//!   such lines in [`Finished::lost`], so the simulator can charge the loss to
//!   the drain (the oracle's `no-silent-loss`).
//! - [`Drain::CommittedOffset`] never removes what it has not read: the reader
//!   keeps a position in the file (a position counts bytes since the file was
//!   created, so it survives pruning) in a small file beside the inbox, and
//!   moves it only past lines it returned. A line appended in the gap lies
//!   past the committed position and is returned by the next read.
//!
//! Why a committed offset rather than rename-then-read: a rename is safe only
//! if no sender still holds the old file open (a sender that opened it before
//! the rename appends to the renamed file after the reader took it), and
//! showing that needs open file handles, which nothing else here has. The
//! offset is one atomic write of a number, and it makes growth visible: the
//! file keeps everything until the reader prunes it.

use super::fs::SimFs;
use super::line::Line;
use super::line::LineError;
use super::scan::{scan_by, Skipped};
use super::write::inbox_path;

/// How an agent drains its inbox file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Drain {
    /// The reference's read-then-truncate: loses lines appended in between.
    #[default]
    ReadThenTruncate,
    /// Read from a committed position, commit past what was read: loses none.
    CommittedOffset,
}

impl Drain {
    pub fn as_str(self) -> &'static str {
        match self {
            Drain::ReadThenTruncate => "read-then-truncate",
            Drain::CommittedOffset => "committed-offset",
        }
    }
}

/// The file that holds a reader's committed position.
pub fn offset_path(owner: &str) -> String {
    super::write::joined(owner, ".jsonl.offset")
}

/// The position a committed-offset reader has read up to (0 if it never
/// committed). An offset file that does not hold a number counts as 0: every
/// line is read again, which duplicates and never loses.
pub fn committed(fs: &SimFs, owner: &str) -> u64 {
    fs.read(&offset_path(owner))
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// What the first step of a read found: each message as a [`Line`], or as
/// what the caller of [`begin_read_by`] keeps of one.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch<L = Line> {
    /// The messages, oldest first, with the position of each line.
    pub lines: Vec<(u64, L)>,
    /// Lines skipped: torn fragments and objects that are not messages.
    pub skipped: Vec<Skipped>,
    /// Bytes the read went through: the whole file, as the reference's
    /// `read_text()` reads it. This is what a read costs (see `cost`).
    pub scanned: u64,
}

impl<L> Default for Batch<L> {
    fn default() -> Self {
        Batch { lines: Vec::new(), skipped: Vec::new(), scanned: 0 }
    }
}

/// Proof of a read begun; give it back to [`finish_read`]. A reader that
/// crashes drops it, and then the read never happened. Clone, because the
/// explorer copies a world with a read in progress into each of its futures.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "a read that is never finished is read again"]
pub struct ReadToken {
    owner: String,
    drain: Drain,
    /// Position just past the last complete line the read returned.
    upto: u64,
    /// The reference truncates only a file that existed when it read.
    existed: bool,
}

/// What the second step of a read did.
#[derive(Clone, Debug, PartialEq)]
pub struct Finished<L = Line> {
    /// Messages destroyed without ever being returned: appended between the
    /// two steps of a read-then-truncate.
    pub lost: Vec<(u64, L)>,
    /// Fragments and invalid lines destroyed by the truncate, never returned
    /// by a read: each is reported here once.
    pub skipped: Vec<Skipped>,
}

impl<L> Default for Finished<L> {
    fn default() -> Self {
        Finished { lost: Vec::new(), skipped: Vec::new() }
    }
}

/// First step of a read: the lines not yet read, and a token to finish with.
pub fn begin_read(fs: &SimFs, owner: &str, drain: Drain) -> (Batch, ReadToken) {
    begin_read_by(fs, owner, drain, |_, body| Line::parse(body, owner))
}

/// As [`begin_read`], each line read by `read` (see [`scan_by`]).
pub fn begin_read_by<L>(
    fs: &SimFs,
    owner: &str,
    drain: Drain,
    read: impl FnMut(u64, &[u8]) -> Result<L, LineError>,
) -> (Batch<L>, ReadToken) {
    let path = inbox_path(owner);
    let Some(file) = fs.file(&path) else {
        let upto = if drain == Drain::CommittedOffset { committed(fs, owner) } else { 0 };
        return (Batch::default(), ReadToken { owner: owner.to_string(), drain, upto, existed: false });
    };
    let start = match drain {
        Drain::ReadThenTruncate => file.dropped,
        Drain::CommittedOffset => {
            let at = committed(fs, owner);
            // A position past the end belongs to an earlier file of the same
            // name: start again from the beginning rather than skip lines.
            if at > file.end() {
                file.dropped
            } else {
                at.max(file.dropped)
            }
        }
    };
    let from = (start - file.dropped) as usize;
    let found = scan_by(&file.bytes[from..], start, read);
    let batch = Batch { lines: found.lines, skipped: found.skipped, scanned: file.bytes.len() as u64 };
    (batch, ReadToken { owner: owner.to_string(), drain, upto: found.end, existed: true })
}

/// Second step of a read: truncate, or commit the position.
pub fn finish_read(fs: &mut SimFs, token: ReadToken) -> Finished {
    let owner = token.owner.clone();
    finish_read_by(fs, token, |_, body| Line::parse(body, &owner))
}

/// As [`finish_read`], each line a truncate destroys read by `read` (see
/// [`scan_by`]).
pub fn finish_read_by<L>(
    fs: &mut SimFs,
    token: ReadToken,
    read: impl FnMut(u64, &[u8]) -> Result<L, LineError>,
) -> Finished<L> {
    match token.drain {
        Drain::CommittedOffset => {
            if token.upto > committed(fs, &token.owner) {
                fs.write(&offset_path(&token.owner), format!("{}\n", token.upto).as_bytes());
            }
            Finished::default()
        }
        Drain::ReadThenTruncate => {
            let path = inbox_path(&token.owner);
            let Some(file) = fs.file(&path).filter(|_| token.existed) else {
                return Finished::default();
            };
            // Everything past what the read returned is about to go: lines
            // appended in the gap, and any fragment at the end.
            // A file shorter than what was read is another file of the same
            // name: all of it is about to go.
            let start = if token.upto > file.end() { file.dropped } else { token.upto.max(file.dropped) };
            let from = (start - file.dropped) as usize;
            let doomed = scan_by(&file.bytes[from..], start, read);
            let mut skipped = doomed.skipped;
            if !doomed.tail.is_empty() {
                skipped.push(Skipped::Torn { offset: doomed.end, bytes: doomed.tail });
            }
            fs.truncate(&path);
            Finished { lost: doomed.lines, skipped }
        }
    }
}

/// Removes what has been read from the front of the file, so reads stop
/// paying for it. Returns the bytes freed.
///
/// With read-then-truncate every read already empties the file: nothing to
/// prune. With a committed offset the bytes before the position go, in one
/// step, as a writer holding the inbox's lock would rewrite the file; the
/// position itself does not change, so pruning in the middle of a read is safe.
pub fn prune(fs: &mut SimFs, owner: &str, drain: Drain) -> u64 {
    if drain == Drain::ReadThenTruncate {
        return 0;
    }
    let path = inbox_path(owner);
    let at = committed(fs, owner);
    let Some(file) = fs.file(&path) else { return 0 };
    let len = at.min(file.end()).saturating_sub(file.dropped);
    if len > 0 {
        fs.drop_prefix(&path, len);
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbox::fs::SimFile;
    use crate::inbox::write::{append_line, append_line_torn, framed};
    use crate::protocol::{Message, Millis};
    use rand::{Rng, SeedableRng};

    const BOTH: [Drain; 2] = [Drain::ReadThenTruncate, Drain::CommittedOffset];

    fn line(from: &str, seq: u64) -> Line {
        Line {
            from: from.into(),
            to: "lead".into(),
            at: Millis(seq),
            message: Message::Message { text: format!("m{seq}").into() },
            seq: Some(seq),
            incarnation: None,
        }
    }

    fn read_all(fs: &mut SimFs, drain: Drain) -> (Vec<Line>, Vec<Skipped>) {
        let (batch, token) = begin_read(fs, "lead", drain);
        let done = finish_read(fs, token);
        assert!(done.lost.is_empty(), "nothing appended in the gap, nothing lost");
        let mut skipped = batch.skipped;
        skipped.extend(done.skipped);
        (batch.lines.into_iter().map(|(_, l)| l).collect(), skipped)
    }

    fn torn_count(skipped: &[Skipped]) -> usize {
        skipped.iter().filter(|s| matches!(s, Skipped::Torn { .. })).count()
    }

    #[test]
    fn a_crash_at_every_byte_of_an_append_keeps_the_lines_before_it_and_after_it() {
        let path = inbox_path("lead");
        let before: Vec<Line> = (0..3).map(|i| line("bob", i)).collect();
        let victim = line("carol", 3);
        let after = line("dave", 4);
        for drain in BOTH {
            let whole = framed(&SimFs::new(), &path, &victim).len();
            for cut in 0..whole {
                let ctx = format!("{} cut at {cut} of {whole}", drain.as_str());
                // The bytes that landed are the whole message but its newline:
                // once terminated, that is a line, and it is read (nothing of
                // it was lost) unless a truncate destroyed it first.
                let complete_but_newline = cut == whole - 1;
                let fragment = cut > 0;

                // A read right after the crash, then a later append.
                let mut fs = SimFs::new();
                for l in &before {
                    append_line(&mut fs, &path, l);
                }
                append_line_torn(&mut fs, &path, &victim, cut);
                let (first, skipped_first) = read_all(&mut fs, drain);
                assert_eq!(first, before, "{ctx}: exactly the complete lines before the crash");
                append_line(&mut fs, &path, &after);
                let (second, skipped_second) = read_all(&mut fs, drain);
                let revived = complete_but_newline && drain == Drain::CommittedOffset;
                let want: Vec<Line> = if revived { vec![victim.clone(), after.clone()] } else { vec![after.clone()] };
                assert_eq!(second, want, "{ctx}: the line after the fragment is not lost");
                let torn = torn_count(&skipped_first) + torn_count(&skipped_second);
                assert_eq!(torn, usize::from(fragment && !revived), "{ctx}: the fragment reported once");
                if let Some(Skipped::Torn { bytes, .. }) = skipped_first.iter().chain(&skipped_second).next() {
                    assert_eq!(&bytes[..], &victim.to_json_line().as_bytes()[..cut], "{ctx}");
                }

                // No read in between: the next append terminates the fragment.
                let mut fs = SimFs::new();
                for l in &before {
                    append_line(&mut fs, &path, l);
                }
                append_line_torn(&mut fs, &path, &victim, cut);
                append_line(&mut fs, &path, &after);
                let (lines, skipped) = read_all(&mut fs, drain);
                let mut want = before.clone();
                if complete_but_newline {
                    want.push(victim.clone());
                }
                want.push(after.clone());
                assert_eq!(lines, want, "{ctx}: without a read between");
                assert_eq!(torn_count(&skipped), usize::from(fragment && !complete_but_newline), "{ctx}");
            }
        }
    }

    #[test]
    fn unread_lines_survive_a_reader_crash() {
        for drain in BOTH {
            let mut fs = SimFs::new();
            for i in 0..3 {
                append_line(&mut fs, &inbox_path("lead"), &line("bob", i));
            }
            // The reader crashes between the two steps: its token is gone.
            let (seen, token) = begin_read(&fs, "lead", drain);
            drop(token);
            let (again, token) = begin_read(&fs, "lead", drain);
            assert_eq!(again, seen, "{}", drain.as_str());
            assert_eq!(again.lines.len(), 3);
            let _ = finish_read(&mut fs, token);
            let (empty, _) = begin_read(&fs, "lead", drain);
            assert!(empty.lines.is_empty(), "{}: a finished read is not read again", drain.as_str());
        }
    }

    #[test]
    fn a_line_appended_between_read_and_truncate_is_lost_and_reported() {
        let path = inbox_path("lead");
        let mut fs = SimFs::new();
        append_line(&mut fs, &path, &line("bob", 0));
        let (batch, token) = begin_read(&fs, "lead", Drain::ReadThenTruncate);
        append_line(&mut fs, &path, &line("carol", 1));
        let done = finish_read(&mut fs, token);
        assert_eq!(batch.lines.len(), 1);
        assert_eq!(done.lost.iter().map(|(_, l)| l.seq).collect::<Vec<_>>(), vec![Some(1)]);
        assert_eq!(fs.size(&path), 0);

        // The same gap with a committed offset: the line waits for the next read.
        let mut fs = SimFs::new();
        append_line(&mut fs, &path, &line("bob", 0));
        let (_, token) = begin_read(&fs, "lead", Drain::CommittedOffset);
        append_line(&mut fs, &path, &line("carol", 1));
        assert_eq!(finish_read(&mut fs, token), Finished::default());
        let (next, _) = read_all_batch(&mut fs, Drain::CommittedOffset);
        assert_eq!(next.lines.iter().map(|(_, l)| l.seq).collect::<Vec<_>>(), vec![Some(1)]);
    }

    fn read_all_batch(fs: &mut SimFs, drain: Drain) -> (Batch, Finished) {
        let (batch, token) = begin_read(fs, "lead", drain);
        (batch, finish_read(fs, token))
    }

    #[test]
    fn the_reference_only_truncates_a_file_it_found() {
        let mut fs = SimFs::new();
        let (_, token) = begin_read(&fs, "lead", Drain::ReadThenTruncate);
        append_line(&mut fs, &inbox_path("lead"), &line("bob", 0));
        assert_eq!(finish_read(&mut fs, token), Finished::default());
        assert_eq!(read_all(&mut fs, Drain::ReadThenTruncate).0.len(), 1);
    }

    #[test]
    fn a_file_replaced_during_a_read_is_truncated_and_reported_whole() {
        let path = inbox_path("lead");
        let mut fs = SimFs::new();
        append_line(&mut fs, &path, &line("bob", 0));
        append_line(&mut fs, &path, &line("bob", 1));
        let (_, token) = begin_read(&fs, "lead", Drain::ReadThenTruncate);
        fs.remove(&path);
        append_line(&mut fs, &path, &line("carol", 2));
        let done = finish_read(&mut fs, token);
        assert_eq!(done.lost.iter().map(|(_, l)| l.seq).collect::<Vec<_>>(), vec![Some(2)]);
    }

    #[test]
    fn an_unpruned_inbox_costs_more_to_read_until_pruned() {
        let mut fs = SimFs::new();
        let mut scanned = Vec::new();
        for i in 0..5 {
            append_line(&mut fs, &inbox_path("lead"), &line("bob", i));
            let (batch, done) = read_all_batch(&mut fs, Drain::CommittedOffset);
            assert_eq!(batch.lines.len(), 1);
            assert!(done.lost.is_empty());
            scanned.push(batch.scanned);
        }
        assert!(scanned.windows(2).all(|w| w[0] < w[1]), "{scanned:?}");
        let freed = prune(&mut fs, "lead", Drain::CommittedOffset);
        assert_eq!(freed, scanned[4]);
        let (batch, _) = read_all_batch(&mut fs, Drain::CommittedOffset);
        assert_eq!((batch.scanned, batch.lines.len()), (0, 0));
        // After pruning, positions still count from the file's creation.
        append_line(&mut fs, &inbox_path("lead"), &line("bob", 9));
        let (batch, _) = read_all_batch(&mut fs, Drain::CommittedOffset);
        assert_eq!(batch.lines.iter().map(|(at, l)| (*at, l.seq)).collect::<Vec<_>>(), vec![(freed, Some(9))]);
        assert_eq!(prune(&mut fs, "lead", Drain::ReadThenTruncate), 0);
    }

    #[test]
    fn pruning_during_a_read_loses_nothing() {
        let path = inbox_path("lead");
        let mut fs = SimFs::new();
        append_line(&mut fs, &path, &line("bob", 0));
        let _ = read_all(&mut fs, Drain::CommittedOffset);
        append_line(&mut fs, &path, &line("bob", 1));
        let (batch, token) = begin_read(&fs, "lead", Drain::CommittedOffset);
        assert!(prune(&mut fs, "lead", Drain::CommittedOffset) > 0);
        append_line(&mut fs, &path, &line("bob", 2));
        let _ = finish_read(&mut fs, token);
        let (next, _) = read_all(&mut fs, Drain::CommittedOffset);
        assert_eq!(batch.lines.iter().map(|(_, l)| l.seq).collect::<Vec<_>>(), vec![Some(1)]);
        assert_eq!(next.iter().map(|l| l.seq).collect::<Vec<_>>(), vec![Some(2)]);
    }

    /// What many senders and one reader did to an inbox.
    struct Played {
        /// Sequence numbers in the order the reader got them.
        read: Vec<u64>,
        /// Sequence numbers the drain reported lost.
        lost: Vec<u64>,
        /// The files at the end, byte for byte.
        files: Vec<(String, SimFile)>,
    }

    /// `senders` senders append `each` messages to the lead's inbox in a
    /// seeded random order, while the lead reads now and then: it begins a
    /// read, senders may append, and then it finishes. Every 64th read it
    /// prunes.
    fn play(drain: Drain, seed: u64, senders: u64, each: u64) -> Played {
        let path = inbox_path("lead");
        let names: Vec<String> = (0..senders).map(|s| format!("s{s}")).collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut fs = SimFs::new();
        let mut next = vec![0u64; senders as usize];
        let mut open: Vec<usize> = (0..senders as usize).collect();
        let mut token = None;
        let mut reads = 0u64;
        let mut out = Played { read: Vec::new(), lost: Vec::new(), files: Vec::new() };
        let finish = |fs: &mut SimFs, token: ReadToken, out: &mut Played, reads: &mut u64| {
            let done = finish_read(fs, token);
            out.lost.extend(done.lost.iter().filter_map(|(_, l)| l.seq));
            assert!(done.skipped.is_empty(), "no writer crashed");
            *reads += 1;
            if reads.is_multiple_of(64) {
                prune(fs, "lead", drain);
            }
        };
        while !open.is_empty() {
            // About one step in 16 is the reader's, so a read's gap usually
            // holds a few appends, sometimes none.
            if rng.gen_ratio(1, 16) {
                match token.take() {
                    None => {
                        let (batch, t) = begin_read(&fs, "lead", drain);
                        assert!(batch.skipped.is_empty());
                        out.read.extend(batch.lines.iter().filter_map(|(_, l)| l.seq));
                        token = Some(t);
                    }
                    Some(t) => finish(&mut fs, t, &mut out, &mut reads),
                }
                continue;
            }
            let pick = rng.gen_range(0..open.len());
            let s = open[pick];
            let seq = s as u64 * each + next[s];
            append_line(&mut fs, &path, &line(&names[s], seq));
            next[s] += 1;
            if next[s] == each {
                open.swap_remove(pick);
            }
        }
        if let Some(t) = token.take() {
            finish(&mut fs, t, &mut out, &mut reads);
        }
        let (batch, t) = begin_read(&fs, "lead", drain);
        out.read.extend(batch.lines.iter().filter_map(|(_, l)| l.seq));
        finish(&mut fs, t, &mut out, &mut reads);
        out.files = fs.files().map(|(p, f)| (p.to_string(), f.clone())).collect();
        out
    }

    fn in_sender_order(read: &[u64], each: u64) -> bool {
        let mut last: std::collections::BTreeMap<u64, u64> = Default::default();
        read.iter().all(|&seq| {
            let s = seq / each;
            let ok = last.get(&s).is_none_or(|&prev| prev < seq);
            last.insert(s, seq);
            ok
        })
    }

    #[test]
    fn eight_senders_ten_thousand_each_the_safe_drain_loses_none() {
        let (senders, each) = (8, 10_000);
        let played = play(Drain::CommittedOffset, 7, senders, each);
        assert!(played.lost.is_empty());
        let mut sorted = played.read.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..senders * each).collect::<Vec<_>>(), "every message read exactly once");
        assert!(in_sender_order(&played.read, each));
    }

    #[test]
    fn eight_senders_ten_thousand_each_read_then_truncate_loses_some_and_says_which() {
        let (senders, each) = (8, 10_000);
        let played = play(Drain::ReadThenTruncate, 7, senders, each);
        assert!(!played.lost.is_empty(), "appends fell in the gap between read and truncate");
        // Every message is either read or reported lost, never both, never neither.
        let mut all: Vec<u64> = played.read.iter().chain(&played.lost).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..senders * each).collect::<Vec<_>>());
        assert!(in_sender_order(&played.read, each));
    }

    #[test]
    fn the_same_seed_plays_the_same() {
        for drain in BOTH {
            let a = play(drain, 3, 3, 200);
            let b = play(drain, 3, 3, 200);
            assert!(!a.files.is_empty());
            assert_eq!((&a.read, &a.lost, &a.files), (&b.read, &b.lost, &b.files), "{}", drain.as_str());
            // And a different seed plays differently, or the test shows nothing.
            let c = play(drain, 4, 3, 200);
            assert_ne!(a.read, c.read, "{}", drain.as_str());
        }
    }
}
