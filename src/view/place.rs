//! Where a label goes so that it hides no other: every text the picture
//! draws is a box on the page; a label tries the places it may stand in
//! (beside its lifeline on either side, a little above or below, further
//! along its arrow) and takes the first where its box meets none already
//! taken. Widths are estimated from DejaVu Sans's advances (the font the
//! picture asks for first), so the page is the same on every machine; the
//! estimate errs wide, and a test measures the real boxes.

/// A box on the page.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl Rect {
    pub fn meets(&self, o: &Rect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }

    pub fn union(&self, o: &Rect) -> Rect {
        Rect { x0: self.x0.min(o.x0), y0: self.y0.min(o.y0), x1: self.x1.max(o.x1), y1: self.y1.max(o.y1) }
    }
}

/// One character's advance in DejaVu Sans, in ems (its units / 2048,
/// rounded up, grouped by shape).
fn advance(c: char) -> f64 {
    match c {
        ' ' | '.' | ',' | '·' | '\'' => 0.32,
        'i' | 'j' | 'l' | 'I' | '|' => 0.28,
        ':' | ';' | '!' => 0.34,
        't' | 'f' | '(' | ')' | '[' | ']' | '-' | '/' => 0.40,
        '“' | '”' | '"' => 0.46,
        'r' => 0.42,
        's' | 'z' | 'c' | 'J' => 0.55,
        'm' => 0.98,
        'w' => 0.82,
        'W' => 1.0,
        'M' => 0.87,
        'a'..='z' => 0.64,
        '0'..='9' => 0.64,
        'A'..='Z' => 0.74,
        '%' | '@' => 0.95,
        '#' | '_' | '=' | '+' | '<' | '>' | '~' | '*' | '&' | '?' => 0.84,
        c if c.is_ascii() => 0.64,
        // Arrows, dingbats and symbols (→ ⟳ ✓ ✗ ⚠ ◷ ✸ ⊘ ‖ ⟂ ✕ …).
        _ => 1.0,
    }
}

/// How wide `s` is at `size` px.
pub fn width(s: &str, size: f64) -> f64 {
    s.chars().map(advance).sum::<f64>() * size
}

/// The longest start of `s` that leaves room for an ellipsis (one `size`)
/// within `room` px: the widths summed once, char by char, as [`width`]
/// sums them, not measured again for every shorter cut (a long word made
/// a picture quadratic in its length).
pub fn fitting_prefix(s: &str, size: f64, room: f64) -> &str {
    let mut advances = 0.0;
    let mut end = 0;
    for (i, c) in s.char_indices() {
        advances += advance(c);
        if advances * size + size > room {
            break;
        }
        end = i + c.len_utf8();
    }
    &s[..end]
}

/// The box of `s` drawn at `(x, y)` (its baseline) with `anchor`.
pub fn text_box((x, y): (f64, f64), size: f64, anchor: &str, s: &str) -> Rect {
    let w = width(s, size);
    let x0 = match anchor {
        "middle" => x - w / 2.0,
        "end" => x - w,
        _ => x,
    };
    // DejaVu Sans's ascent and descent, with a pixel of air.
    Rect { x0: x0 - 1.0, y0: y - 0.95 * size - 1.0, x1: x0 + w + 1.0, y1: y + 0.27 * size + 1.0 }
}

/// A message's words as lines of at most `max` characters, broken between
/// words (a word longer than a line is a line of its own): a 160-character
/// status report is three lines near its arrow, not one across the page.
pub fn wrap(s: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in s.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > max {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// How many characters a message's words may take on one line.
pub const WORDS_LINE: usize = 64;

/// The boxes taken so far, and the lines labels keep off, bucketed by
/// height on the page so that a picture of a thousand labels checks each
/// against its neighbours only.
///
/// What a label may not meet: another label, and a shape (a bar, a span, a
/// mark, an arrowhead), which a label over it would hide. What it had
/// rather not meet: a line (a lifeline, an arrow), which it may stand on
/// if no place beside one is free, on a card that hides the line under it
/// (as diagram tools draw a label on its edge), so the line never strikes
/// the words through.
#[derive(Default)]
pub struct Placer {
    boxes: Vec<Rect>,
    buckets: Vec<Vec<usize>>,
    lines: Vec<((f64, f64), (f64, f64))>,
    line_buckets: Vec<Vec<usize>>,
}

/// Where a label went: clear of every line, on a card over a line, or on a
/// card where even shapes or labels leave no room (the picture is then
/// denser than its rows allow, and the test that measures it says so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spot {
    Clear,
    OnCard,
    Crowded,
}

impl Spot {
    /// Whether the label is drawn on a card.
    pub fn carded(self) -> bool {
        self != Spot::Clear
    }
}

const BUCKET: f64 = 40.0;

fn bucket_range(y0: f64, y1: f64) -> std::ops::RangeInclusive<usize> {
    let lo = (y0.max(0.0) / BUCKET) as usize;
    let hi = (y1.max(0.0) / BUCKET) as usize;
    lo..=hi
}

fn file(buckets: &mut Vec<Vec<usize>>, range: std::ops::RangeInclusive<usize>, i: usize) {
    for b in range {
        if buckets.len() <= b {
            buckets.resize_with(b + 1, Vec::new);
        }
        buckets[b].push(i);
    }
}

/// Whether the line from `a` to `b` passes through `r` (clipped to it,
/// Liang and Barsky's way).
pub fn line_meets((a, b): ((f64, f64), (f64, f64)), r: &Rect) -> bool {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, a.0 - r.x0), (dx, r.x1 - a.0), (-dy, a.1 - r.y0), (dy, r.y1 - a.1)] {
        if p == 0.0 {
            if q <= 0.0 {
                return false;
            }
        } else if p < 0.0 {
            t0 = t0.max(q / p);
        } else {
            t1 = t1.min(q / p);
        }
    }
    t0 < t1
}

impl Placer {
    /// Whether `r` meets no box taken.
    pub fn free(&self, r: &Rect) -> bool {
        bucket_range(r.y0, r.y1)
            .filter_map(|b| self.buckets.get(b))
            .all(|ids| ids.iter().all(|&i| !self.boxes[i].meets(r)))
    }

    /// Whether no line a label keeps off passes through `r`.
    pub fn off_lines(&self, r: &Rect) -> bool {
        bucket_range(r.y0, r.y1)
            .filter_map(|b| self.line_buckets.get(b))
            .all(|ids| ids.iter().all(|&i| !line_meets(self.lines[i], r)))
    }

    /// How much of `r` is covered by boxes taken (a fallback's measure).
    fn overlap(&self, r: &Rect) -> f64 {
        let mut seen = std::collections::BTreeSet::new();
        let mut area = 0.0;
        for b in bucket_range(r.y0, r.y1) {
            for &i in self.buckets.get(b).into_iter().flatten() {
                let o = &self.boxes[i];
                if seen.insert(i) && o.meets(r) {
                    area += (r.x1.min(o.x1) - r.x0.max(o.x0)) * (r.y1.min(o.y1) - r.y0.max(o.y0));
                }
            }
        }
        area
    }

    /// Takes `r`, whether or not it is free (the fixed parts of the page,
    /// and the shapes no label may cover).
    pub fn take(&mut self, r: Rect) {
        let i = self.boxes.len();
        self.boxes.push(r);
        file(&mut self.buckets, bucket_range(r.y0, r.y1), i);
    }

    /// A line labels keep off where they can: from `a` to `b`, `half` wide
    /// on each side (a thick line is two thin ones at its edges and one in
    /// its middle).
    pub fn line(&mut self, a: (f64, f64), b: (f64, f64), half: f64) {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let len = (dx * dx + dy * dy).sqrt().max(f64::EPSILON);
        let (nx, ny) = (-dy / len * half, dx / len * half);
        let offsets: &[f64] = if half > 0.0 { &[-1.0, 0.0, 1.0] } else { &[0.0] };
        for &k in offsets {
            let (a, b) = ((a.0 + k * nx, a.1 + k * ny), (b.0 + k * nx, b.1 + k * ny));
            let i = self.lines.len();
            self.lines.push((a, b));
            file(&mut self.line_buckets, bucket_range(a.1.min(b.1), a.1.max(b.1)), i);
        }
    }

    /// Takes `r` if it meets no box, and says where it stands.
    pub fn try_take(&mut self, r: &Rect) -> Spot {
        if !self.free(r) {
            return Spot::Crowded;
        }
        self.take(*r);
        if self.off_lines(r) {
            Spot::Clear
        } else {
            Spot::OnCard
        }
    }

    /// The first of `candidates` that meets neither a box nor a line; else
    /// the first that meets no box, on a card; else the one least covered.
    /// The place chosen is taken.
    pub fn choose(&mut self, candidates: &[Rect]) -> (usize, Spot) {
        let clear = candidates.iter().position(|r| self.free(r) && self.off_lines(r));
        let first = clear.map(|i| (i, Spot::Clear));
        self.settle(
            candidates,
            first.or_else(|| candidates.iter().position(|r| self.free(r)).map(|i| (i, Spot::OnCard))),
        )
    }

    /// The first of `candidates` that meets no box and either meets no line
    /// or may stand on a card (its flag): a label near its arrow on a card
    /// is better than one clear but far from it. Else the one least covered.
    pub fn choose_in_order(&mut self, candidates: &[(Rect, bool)]) -> (usize, Spot) {
        let first = candidates.iter().enumerate().find_map(|(i, (r, card))| {
            if !self.free(r) {
                None
            } else if self.off_lines(r) {
                Some((i, Spot::Clear))
            } else {
                card.then_some((i, Spot::OnCard))
            }
        });
        let rects: Vec<Rect> = candidates.iter().map(|c| c.0).collect();
        self.settle(&rects, first)
    }

    /// Takes the place `found`, or else the least covered of `candidates`.
    fn settle(&mut self, candidates: &[Rect], found: Option<(usize, Spot)>) -> (usize, Spot) {
        let (pick, spot) = match found {
            Some(found) => found,
            None => {
                let mut best = 0;
                let mut least = f64::INFINITY;
                for (i, r) in candidates.iter().enumerate() {
                    let o = self.overlap(r);
                    if o < least {
                        least = o;
                        best = i;
                    }
                }
                (best, Spot::Crowded)
            }
        };
        if let Some(r) = candidates.get(pick) {
            self.take(*r);
        }
        (pick, spot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_takes_the_first_free_place() {
        let mut p = Placer::default();
        let a = text_box((100.0, 100.0), 10.0, "start", "shutdown_request");
        p.take(a);
        let same = text_box((100.0, 100.0), 10.0, "start", "other");
        let below = text_box((100.0, 116.0), 10.0, "start", "other");
        assert!(!p.free(&same));
        assert!(p.free(&below));
        assert_eq!(p.choose(&[same, below]), (1, Spot::Clear));
        assert!(!p.free(&below), "a chosen place is taken");
    }

    #[test]
    fn words_wrap_between_words() {
        assert_eq!(wrap("a bb ccc", 4), vec!["a bb", "ccc"]);
        assert_eq!(wrap("short", 64), vec!["short"]);
        assert_eq!(wrap("averyveryverylongword x", 5), vec!["averyveryverylongword", "x"]);
        assert_eq!(wrap("", 5), vec![""]);
    }

    #[test]
    fn anchors_put_the_box_where_the_text_is() {
        let s = text_box((200.0, 50.0), 10.0, "start", "abc");
        let e = text_box((200.0, 50.0), 10.0, "end", "abc");
        let m = text_box((200.0, 50.0), 10.0, "middle", "abc");
        assert!(s.x0 < 200.0 && s.x1 > 210.0);
        assert!(e.x1 > 200.0 && e.x1 < 202.0);
        assert!((m.x0 + m.x1) / 2.0 - 200.0 < 0.01);
    }

    #[test]
    fn when_nothing_is_free_the_least_covered_place_wins() {
        let mut p = Placer::default();
        p.take(Rect { x0: 0.0, y0: 0.0, x1: 100.0, y1: 100.0 });
        let deep = Rect { x0: 10.0, y0: 10.0, x1: 50.0, y1: 50.0 };
        let edge = Rect { x0: 95.0, y0: 10.0, x1: 150.0, y1: 50.0 };
        assert_eq!(p.choose(&[deep, edge]), (1, Spot::Crowded));
    }

    #[test]
    fn a_label_keeps_off_lines_where_it_can_and_else_stands_on_a_card() {
        let mut p = Placer::default();
        // A lifeline at x = 100 and an arrow from it down to the right.
        p.line((100.0, 0.0), (100.0, 400.0), 2.5);
        p.line((100.0, 100.0), (300.0, 140.0), 0.8);
        let on_arrow = text_box((200.0, 124.0), 10.0, "middle", "request");
        let on_lifeline = text_box((100.0, 60.0), 10.0, "middle", "request");
        let above = text_box((200.0, 100.0), 10.0, "middle", "request");
        assert!(!p.off_lines(&on_arrow) && !p.off_lines(&on_lifeline));
        assert!(p.off_lines(&above), "{above:?} is above the arrow");
        assert_eq!(p.choose(&[on_arrow, above]), (1, Spot::Clear));
        assert_eq!(p.choose(&[on_lifeline]), (0, Spot::OnCard), "no clear place: a card");
        assert_eq!(p.choose(&[on_lifeline]), (0, Spot::Crowded), "a box taken is never covered by choice");
    }

    #[test]
    fn a_line_through_a_box_meets_it_and_one_beside_it_does_not() {
        let r = Rect { x0: 10.0, y0: 10.0, x1: 20.0, y1: 20.0 };
        assert!(line_meets(((0.0, 0.0), (30.0, 30.0)), &r));
        assert!(line_meets(((15.0, 0.0), (15.0, 30.0)), &r), "vertical, through");
        assert!(!line_meets(((25.0, 0.0), (25.0, 30.0)), &r), "vertical, beside");
        assert!(!line_meets(((0.0, 25.0), (30.0, 25.0)), &r), "horizontal, below");
        assert!(!line_meets(((0.0, 0.0), (8.0, 8.0)), &r), "ends before it");
        assert!(line_meets(((12.0, 12.0), (13.0, 13.0)), &r), "wholly inside");
    }
}
