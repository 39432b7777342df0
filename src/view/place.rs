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

/// The boxes taken so far, bucketed by height on the page so that a
/// picture of a thousand labels checks each against its neighbours only.
#[derive(Default)]
pub struct Placer {
    boxes: Vec<Rect>,
    buckets: Vec<Vec<usize>>,
}

const BUCKET: f64 = 40.0;

impl Placer {
    fn bucket_range(r: &Rect) -> std::ops::RangeInclusive<usize> {
        let lo = (r.y0.max(0.0) / BUCKET) as usize;
        let hi = (r.y1.max(0.0) / BUCKET) as usize;
        lo..=hi
    }

    /// Whether `r` meets no box taken.
    pub fn free(&self, r: &Rect) -> bool {
        Self::bucket_range(r)
            .filter_map(|b| self.buckets.get(b))
            .all(|ids| ids.iter().all(|&i| !self.boxes[i].meets(r)))
    }

    /// How much of `r` is covered by boxes taken (a fallback's measure).
    fn overlap(&self, r: &Rect) -> f64 {
        let mut seen = std::collections::BTreeSet::new();
        let mut area = 0.0;
        for b in Self::bucket_range(r) {
            for &i in self.buckets.get(b).into_iter().flatten() {
                let o = &self.boxes[i];
                if seen.insert(i) && o.meets(r) {
                    area += (r.x1.min(o.x1) - r.x0.max(o.x0)) * (r.y1.min(o.y1) - r.y0.max(o.y0));
                }
            }
        }
        area
    }

    /// Takes `r`, whether or not it is free (the fixed parts of the page).
    pub fn take(&mut self, r: Rect) {
        let i = self.boxes.len();
        self.boxes.push(r);
        for b in Self::bucket_range(&r) {
            if self.buckets.len() <= b {
                self.buckets.resize_with(b + 1, Vec::new);
            }
            self.buckets[b].push(i);
        }
    }

    /// The first of `candidates` that is free, taken; if none is, the one
    /// least covered (the picture is then denser than its rows allow, and
    /// the test that measures every box says so).
    pub fn choose(&mut self, candidates: &[Rect]) -> usize {
        let pick = candidates.iter().position(|r| self.free(r)).unwrap_or_else(|| {
            let mut best = 0;
            let mut least = f64::INFINITY;
            for (i, r) in candidates.iter().enumerate() {
                let o = self.overlap(r);
                if o < least {
                    least = o;
                    best = i;
                }
            }
            best
        });
        if let Some(r) = candidates.get(pick) {
            self.take(*r);
        }
        pick
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
        assert_eq!(p.choose(&[same, below]), 1);
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
        assert_eq!(p.choose(&[deep, edge]), 1);
    }
}
