//! The buffer sweep as one self-contained SVG: the chart of the report and of
//! `fuselage sweep --svg`.
//!
//! A sweep ([`fuselage_pipeline::sweep`]) is a step function: from each step's buffer up to
//! the next, the optimal DRAM is the same. [`SweepChart`] draws it as such, written by hand
//! (no plotting library, no script), so the report's page and the command line's file show the
//! same picture, and a test can read every label back out of the text.
//!
//! ## Design
//!
//! - **Buffer axis**: log 2, from the first step to the range's top (widened to take in β).
//!   Ticks sit on powers of two and read as people write sizes (`256 KiB`, `1 MiB`). When they
//!   would crowd (the widest label, at about 6.5 px a character, and a 12 px gap must fit in
//!   the stride), only the powers whose exponent is a multiple of 2, 5, 10, ... keep their
//!   labels; since 2, 5 and 10 divide 10, `1 KiB`, `1 MiB` and `1 GiB` keep theirs whenever
//!   their octave does. The others keep a short unlabelled tick. A range with fewer than two
//!   powers of two in it labels its own ends instead.
//! - **DRAM axis**: MB (10⁶ bytes, as the command line prints DRAM), over the curve's own range
//!   (and this plan's DRAM), rounded out to whole steps of 1, 2 or 5 × 10^k bytes: of the two
//!   steps around a fifth of the range, the one that comes nearer to five intervals. The ticks
//!   are whole multiples of the step, so their labels are exact decimals (`11.6`, `11.8`), all
//!   with the same number of places.
//! - **Marks**: a dot where the optimum changes (a breakpoint, with its sizes in a tooltip), a
//!   dashed vertical line at β when one is given, a dashed horizontal line at this plan's DRAM
//!   when one is given.
//! - **Text**: every label is a `<text>` with a class (`title`, `x-title`, `y-title`, `x-tick`,
//!   `y-tick`, `beta-label`, `plan-label`, `note`), control characters escaped by
//!   [`fuselage_ir::escape`] and `& < > " '` as XML entities, so a network named `<&` stays
//!   text in the file and in the page.
//!
//! Nothing here fails: an empty sweep draws its frame and says it has no steps; a sweep of one
//! step, or of a one-byte range, is widened half an octave each way.

use crate::markup;
use fuselage_ir::human_size;
use fuselage_pipeline::Sweep;
use std::fmt::Write;

/// The drawing's size and margins, pixels.
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 400.0;
const LEFT: f64 = 68.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 56.0;
/// The width a character of an 11 px label takes, about, and the gap kept between labels.
const CHAR_PX: f64 = 6.5;
const LABEL_GAP_PX: f64 = 12.0;
/// How many intervals the DRAM axis aims at.
const Y_INTERVALS: u64 = 5;

/// A buffer sweep to draw: its steps, the top of its range, and optional marks.
///
/// # Example
/// ```
/// use fuselage_report::chart::SweepChart;
/// // 12 MB from 128 KiB, 10 MB from 1 MiB, up to 8 MiB.
/// let svg = SweepChart::new(&[(128 << 10, 12_000_000), (1 << 20, 10_000_000)], 8 << 20)
///     .title("net: optimal DRAM against buffer")
///     .beta(2 << 20)
///     .to_svg();
/// assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
/// // Each label is the text of a `<text class="...">`.
/// let labels = |class: &str| -> Vec<String> {
///     svg.split(&format!(r#"<text class="{class}""#))
///         .skip(1)
///         .filter_map(|t| t.split_once('>')?.1.split_once("</text>"))
///         .map(|(label, _)| label.to_owned())
///         .collect()
/// };
/// assert_eq!(
///     labels("x-tick"),
///     ["128 KiB", "256 KiB", "512 KiB", "1 MiB", "2 MiB", "4 MiB", "8 MiB"]
/// );
/// assert_eq!(labels("y-tick"), ["10.0", "10.5", "11.0", "11.5", "12.0"]);
/// assert_eq!(labels("beta-label"), ["β = 2 MiB"]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepChart {
    steps: Vec<(u64, u64)>,
    to: u64,
    title: String,
    beta: Option<u64>,
    plan_dram: Option<u64>,
}

impl SweepChart {
    /// A chart of `steps`, each `(buffer_bytes, dram_bytes)`: from that buffer up to the next
    /// step's (or to `to` bytes, for the last) the optimal DRAM is `dram_bytes`. The steps
    /// are sorted by buffer here; a `to` below the last step is taken as the last step.
    pub fn new(steps: &[(u64, u64)], to: u64) -> Self {
        let mut steps = steps.to_vec();
        steps.sort_unstable();
        SweepChart {
            steps,
            to,
            title: "optimal DRAM against buffer".into(),
            beta: None,
            plan_dram: None,
        }
    }

    /// The chart of a computed sweep: its points' buffers and DRAM, up to the last point's
    /// `up_to_bytes`.
    pub fn from_sweep(sweep: &Sweep) -> Self {
        let steps: Vec<(u64, u64)> = sweep
            .points
            .iter()
            .map(|p| (p.buffer_bytes, p.dram_bytes))
            .collect();
        let to = sweep.points.last().map_or(0, |p| p.up_to_bytes);
        SweepChart::new(&steps, to)
    }

    /// The title above the chart (default "optimal DRAM against buffer"); escaped when drawn.
    pub fn title(mut self, title: &str) -> Self {
        self.title = title.to_owned();
        self
    }

    /// Marks the buffer `bytes` (the plan's β) with a dashed vertical line labelled
    /// `β = SIZE`; the buffer axis widens to take it in.
    pub fn beta(mut self, bytes: u64) -> Self {
        self.beta = Some(bytes);
        self
    }

    /// Marks this plan's DRAM, `bytes`, with a dashed horizontal line; the DRAM axis widens to
    /// take it in.
    pub fn plan_dram(mut self, bytes: u64) -> Self {
        self.plan_dram = Some(bytes);
        self
    }

    /// The chart as a self-contained SVG document (one `<svg>` element, UTF-8), to write to a
    /// file or to put inline in an HTML page.
    ///
    /// Complexity: O(s + t) for s steps and t ticks (at most 64 on the buffer axis, about 7 on
    /// the DRAM axis).
    pub fn to_svg(&self) -> String {
        let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let mut out = String::with_capacity(4096 + 160 * self.steps.len());
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="sweep-chart" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">"#
        );
        let _ = writeln!(
            out,
            r##"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>"##
        );
        let _ = writeln!(
            out,
            r#"<text class="title" x="{:.1}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
            WIDTH / 2.0,
            markup::text(&self.title)
        );
        let _ = writeln!(
            out,
            r#"<text class="x-title" x="{:.1}" y="{:.1}" text-anchor="middle">buffer (log scale)</text>"#,
            LEFT + pw / 2.0,
            HEIGHT - 12.0
        );
        let _ = writeln!(
            out,
            r#"<text class="y-title" transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle">optimal DRAM (MB)</text>"#,
            TOP + ph / 2.0
        );
        let (Some(&(first, first_dram)), Some(xs), Some(ys)) =
            (self.steps.first(), self.x_axis(), self.y_axis())
        else {
            frame(&mut out);
            let _ = writeln!(
                out,
                r#"<text class="note" x="{:.1}" y="{:.1}" text-anchor="middle">no steps to draw</text>"#,
                LEFT + pw / 2.0,
                TOP + ph / 2.0
            );
            out.push_str("</svg>\n");
            return out;
        };
        // Grid and ticks first, so that the curve and the marks draw over them.
        for t in &xs.ticks {
            let x = xs.px(t.bytes);
            let _ = writeln!(
                out,
                r##"<line x1="{x:.1}" y1="{TOP:.1}" x2="{x:.1}" y2="{:.1}" stroke="#eee"/>"##,
                TOP + ph
            );
            let len = if t.label.is_some() { 5.0 } else { 3.0 };
            let _ = writeln!(
                out,
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333"/>"##,
                TOP + ph,
                TOP + ph + len
            );
            if let Some(label) = &t.label {
                let _ = writeln!(
                    out,
                    r#"<text class="x-tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                    TOP + ph + 18.0,
                    markup::text(label)
                );
            }
        }
        for (bytes, label) in &ys.ticks {
            let y = ys.px(*bytes);
            let _ = writeln!(
                out,
                r##"<line x1="{LEFT:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/>"##,
                LEFT + pw
            );
            let _ = writeln!(
                out,
                r##"<line x1="{:.1}" y1="{y:.1}" x2="{LEFT:.1}" y2="{y:.1}" stroke="#333"/>"##,
                LEFT - 5.0
            );
            let _ = writeln!(
                out,
                r#"<text class="y-tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                LEFT - 8.0,
                y + 4.0,
                markup::text(label)
            );
        }
        frame(&mut out);
        // The step curve: each DRAM holds until the next step's buffer, the last to the top.
        let mut d = format!("M{:.1} {:.1}", xs.px(first), ys.px(first_dram));
        for w in self.steps.windows(2) {
            let _ = write!(d, " H{:.1} V{:.1}", xs.px(w[1].0), ys.px(w[1].1));
        }
        let _ = write!(d, " H{:.1}", xs.px(self.to.max(self.last_buffer())));
        let _ = writeln!(
            out,
            r##"<path class="curve" d="{d}" fill="none" stroke="#36c" stroke-width="2"/>"##
        );
        for w in self.steps.windows(2) {
            let ((_, below), (at, dram)) = (w[0], w[1]);
            if below == dram {
                continue;
            }
            let _ = writeln!(
                out,
                r##"<circle class="breakpoint" cx="{:.1}" cy="{:.1}" r="3" fill="#36c"><title>{}</title></circle>"##,
                xs.px(at),
                ys.px(dram),
                markup::text(&format!(
                    "from {at} bytes ({}): {} → {} MB",
                    human_size(at),
                    mb(below),
                    mb(dram)
                ))
            );
        }
        if let Some(bytes) = self.plan_dram {
            let y = ys.px(bytes);
            let _ = writeln!(
                out,
                r##"<line class="plan-dram" x1="{LEFT:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#d33" stroke-dasharray="6 4"/>"##,
                LEFT + pw
            );
            let ly = if y < TOP + 14.0 { y + 13.0 } else { y - 4.0 };
            let _ = writeln!(
                out,
                r##"<text class="plan-label" x="{:.1}" y="{ly:.1}" text-anchor="end" fill="#d33">this plan: {} MB</text>"##,
                LEFT + pw - 4.0,
                mb(bytes)
            );
        }
        if let Some(bytes) = self.beta {
            let x = xs.px(bytes);
            let _ = writeln!(
                out,
                r##"<line class="beta" x1="{x:.1}" y1="{TOP:.1}" x2="{x:.1}" y2="{:.1}" stroke="#555" stroke-dasharray="6 4"/>"##,
                TOP + ph
            );
            let (lx, anchor) = if x > LEFT + 0.8 * pw {
                (x - 4.0, "end")
            } else {
                (x + 4.0, "start")
            };
            let _ = writeln!(
                out,
                r##"<text class="beta-label" x="{lx:.1}" y="{:.1}" text-anchor="{anchor}" fill="#333">β = {}</text>"##,
                TOP + 14.0,
                markup::text(&human_size(bytes))
            );
        }
        out.push_str("</svg>\n");
        out
    }

    fn last_buffer(&self) -> u64 {
        self.steps.last().map_or(0, |s| s.0)
    }

    /// The buffer axis: its log-2 domain and ticks; `None` without steps.
    fn x_axis(&self) -> Option<XAxis> {
        let (first, _) = *self.steps.first()?;
        let (lo, hi) = {
            let lo = first.min(self.beta.unwrap_or(u64::MAX)).max(1);
            let hi = self.to.max(self.last_buffer()).max(self.beta.unwrap_or(0));
            (lo, hi.max(lo))
        };
        let (mut l0, mut l1) = ((lo as f64).log2(), (hi as f64).log2());
        if l1 - l0 < 1e-9 {
            (l0, l1) = (l0 - 0.5, l1 + 0.5);
        }
        let mut axis = XAxis {
            l0,
            l1,
            ticks: Vec::new(),
        };
        let pw = WIDTH - LEFT - RIGHT;
        let octave_px = pw / (l1 - l0);
        let powers: Vec<u32> = ((l0 - 1e-9).ceil().max(0.0) as u32..=(l1 + 1e-9).floor() as u32)
            .filter(|&e| e < 64)
            .collect();
        if powers.len() >= 2 {
            let need = powers
                .iter()
                .map(|&e| label_px(&human_size(1 << e)))
                .fold(0.0, f64::max);
            let stride = [1u32, 2, 5, 10, 20, 50]
                .into_iter()
                .find(|&k| f64::from(k) * octave_px >= need)
                .unwrap_or(50);
            for e in powers {
                let bytes = 1u64 << e;
                let label = (e % stride == 0).then(|| human_size(bytes));
                if label.is_some() || octave_px >= 3.0 {
                    axis.ticks.push(Tick { bytes, label });
                }
            }
        } else {
            // Too narrow a range for powers of two: its ends, and a power of two between them
            // if there is one and it leaves room.
            let need = label_px(&human_size(lo)).max(label_px(&human_size(hi)));
            let mut at: Vec<u64> = vec![lo, hi];
            at.extend(powers.iter().map(|&e| 1u64 << e));
            at.sort_unstable();
            at.dedup();
            for bytes in at {
                let clear = axis
                    .ticks
                    .last()
                    .is_none_or(|t: &Tick| axis.px(bytes) - axis.px(t.bytes) >= need);
                if clear {
                    axis.ticks.push(Tick {
                        bytes,
                        label: Some(human_size(bytes)),
                    });
                }
            }
        }
        Some(axis)
    }

    /// The DRAM axis: a 1-2-5 step of about [`Y_INTERVALS`] over the curve and this plan's
    /// DRAM, rounded out to whole steps; `None` without steps.
    fn y_axis(&self) -> Option<YAxis> {
        let values = self.steps.iter().map(|s| s.1).chain(self.plan_dram);
        let (mut lo, mut hi) = values.fold(None, |acc: Option<(u64, u64)>, v| match acc {
            None => Some((v, v)),
            Some((a, b)) => Some((a.min(v), b.max(v))),
        })?;
        if lo == hi {
            let half = (lo / 10).max(5_000);
            (lo, hi) = (lo.saturating_sub(half), hi.saturating_add(half));
        }
        // The 1-2-5 step just above the raw one, or the one below it when that comes nearer
        // to Y_INTERVALS once both ends are rounded out.
        let raw = (hi - lo).div_ceil(Y_INTERVALS).max(1);
        let rounded = |step: u64| (lo / step * step, hi.div_ceil(step).saturating_mul(step));
        let off = |step: u64| {
            let (bottom, top) = rounded(step);
            ((top - bottom) / step).abs_diff(Y_INTERVALS)
        };
        let above = nice_step(raw);
        let step = match nice_below(above) {
            Some(below) if off(below) < off(above) => below,
            _ => above,
        };
        let (bottom, top) = rounded(step);
        // Places enough for the step: 0 from 1 MB up, 1 for 0.1 MB, 2 for 0.01 MB, ...
        let places = (0..=6u32)
            .find(|&p| step.is_multiple_of(10u64.pow(6 - p)))
            .unwrap_or(6);
        let ticks = (0..=(top - bottom) / step)
            .map(|i| {
                let v = bottom + i * step;
                (v, mb_places(v, places))
            })
            .collect();
        Some(YAxis { bottom, top, ticks })
    }
}

/// The room a buffer label needs along the axis, with the gap kept between labels.
fn label_px(label: &str) -> f64 {
    label.chars().count() as f64 * CHAR_PX + LABEL_GAP_PX
}

/// The plot's frame: the two axes.
fn frame(out: &mut String) {
    let _ = writeln!(
        out,
        r##"<path class="axes" d="M{LEFT:.1} {TOP:.1} V{:.1} H{:.1}" fill="none" stroke="#333"/>"##,
        HEIGHT - BOTTOM,
        WIDTH - RIGHT
    );
}

/// A tick of the buffer axis: a power of two (or an end of a narrow range), labelled or not.
struct Tick {
    bytes: u64,
    label: Option<String>,
}

struct XAxis {
    /// log2 of the domain's ends.
    l0: f64,
    l1: f64,
    ticks: Vec<Tick>,
}

impl XAxis {
    fn px(&self, bytes: u64) -> f64 {
        let l = (bytes.max(1) as f64).log2();
        LEFT + (WIDTH - LEFT - RIGHT) * (l - self.l0) / (self.l1 - self.l0)
    }
}

struct YAxis {
    bottom: u64,
    top: u64,
    ticks: Vec<(u64, String)>,
}

impl YAxis {
    fn px(&self, bytes: u64) -> f64 {
        let span = (self.top - self.bottom).max(1) as f64;
        TOP + (HEIGHT - TOP - BOTTOM) * (self.top as f64 - bytes as f64) / span
    }
}

/// The smallest 1, 2 or 5 × 10^k bytes that is at least `raw` (saturating at `u64::MAX`).
fn nice_step(raw: u64) -> u64 {
    let mut decade = 1u64;
    loop {
        for m in [1, 2, 5] {
            let s = decade.saturating_mul(m);
            if s >= raw {
                return s;
            }
        }
        if decade > u64::MAX / 10 {
            return u64::MAX;
        }
        decade *= 10;
    }
}

/// The 1-2-5 step below `step` (itself one), if any: 5 → 2 → 1 → 0.5 (× 10^k).
fn nice_below(step: u64) -> Option<u64> {
    let decade = 10u64.pow(step.checked_ilog10()?);
    match step / decade {
        5 => Some(2 * decade),
        2 => Some(decade),
        _ => (decade >= 10).then_some(decade / 2),
    }
}

/// `bytes` in MB with `places` decimals, exactly (integer arithmetic, cut not rounded: the
/// ticks are whole multiples of a step with no more places).
fn mb_places(bytes: u64, places: u32) -> String {
    let (whole, frac) = (bytes / 1_000_000, bytes % 1_000_000);
    if places == 0 {
        return whole.to_string();
    }
    let frac = format!("{frac:06}");
    format!("{whole}.{}", &frac[..places as usize])
}

/// `bytes` in MB with three decimals, as the command line prints DRAM.
fn mb(bytes: u64) -> String {
    format!("{:.3}", bytes as f64 / 1e6)
}

/// Reading a chart back, for the tests here and in the report's.
#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failing test"
)]
pub(crate) mod read {
    /// The texts of the `<text class="{class}" ...>` elements, in order.
    pub(crate) fn texts(svg: &str, class: &str) -> Vec<String> {
        let open = format!(r#"<text class="{class}""#);
        svg.split(&open)
            .skip(1)
            .map(|rest| {
                let start = rest.find('>').unwrap() + 1;
                let end = rest.find("</text>").unwrap();
                rest[start..end].to_owned()
            })
            .collect()
    }

    /// The value of attribute `name` on the first element of `class`.
    pub(crate) fn attr(svg: &str, class: &str, name: &str) -> String {
        let at = svg.find(&format!(r#"class="{class}""#)).unwrap();
        let rest = &svg[at..];
        let key = format!(r#" {name}=""#);
        let start = rest.find(&key).unwrap() + key.len();
        rest[start..start + rest[start..].find('"').unwrap()].to_owned()
    }

    /// The x of the buffer tick labelled `label`.
    pub(crate) fn tick_x(svg: &str, label: &str) -> String {
        let end = svg
            .find(&format!(r#"text-anchor="middle">{label}</text>"#))
            .unwrap();
        let key = r#"class="x-tick" x=""#;
        let start = svg[..end].rfind(key).unwrap() + key.len();
        svg[start..start + svg[start..].find('"').unwrap()].to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::read::{attr, texts, tick_x};
    use super::*;

    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;

    /// A sweep from 128 KiB to 8 MiB: 12.4 MB, then 11.9 MB from 300 KiB, 11.5 MB from 3 MiB
    /// (up to 8 MiB), with a step of the same DRAM between (a tie, no breakpoint).
    fn known() -> SweepChart {
        SweepChart::new(
            &[
                (128 * KIB, 12_400_000),
                (300 * KIB, 11_900_000),
                (MIB, 11_900_000),
                (3 * MIB, 11_500_000),
            ],
            8 * MIB,
        )
    }

    #[test]
    fn the_buffer_axis_is_labelled_at_each_power_of_two() {
        let svg = known().beta(2 * MIB).to_svg();
        assert_eq!(
            texts(&svg, "x-tick"),
            [
                "128 KiB", "256 KiB", "512 KiB", "1 MiB", "2 MiB", "4 MiB", "8 MiB"
            ]
        );
        assert_eq!(texts(&svg, "x-title"), ["buffer (log scale)"]);
        // Six octaves over 628 px: 128 KiB at the left edge, 8 MiB at the right.
        assert_eq!(tick_x(&svg, "128 KiB"), "68.0");
        assert_eq!(tick_x(&svg, "8 MiB"), "696.0");
    }

    #[test]
    fn the_dram_axis_has_round_labels_in_mb() {
        // 11.5 to 12.4 MB: a step of 0.2 MB, rounded out to 11.4 and 12.4.
        let svg = known().to_svg();
        assert_eq!(
            texts(&svg, "y-tick"),
            ["11.4", "11.6", "11.8", "12.0", "12.2", "12.4"]
        );
        assert_eq!(texts(&svg, "y-title"), ["optimal DRAM (MB)"]);
        // This plan's DRAM widens it: 11.5 to 15 MB, a step of 1 MB.
        let svg = known().plan_dram(15_000_000).to_svg();
        assert_eq!(texts(&svg, "y-tick"), ["11", "12", "13", "14", "15"]);
        assert_eq!(texts(&svg, "plan-label"), ["this plan: 15.000 MB"]);
        // 13.9 to 24 MB: a step of 5 MB would leave 3 intervals (10 to 25), 2 MB leaves 6.
        let wide = SweepChart::new(&[(KIB, 24_000_000), (MIB, 13_900_000)], 2 * MIB).to_svg();
        assert_eq!(
            texts(&wide, "y-tick"),
            ["12", "14", "16", "18", "20", "22", "24"]
        );
        // Tens of MB: a step of 5 MB.
        let big = SweepChart::new(&[(KIB, 82_188_000), (64 * KIB, 61_000_000)], MIB).to_svg();
        assert_eq!(texts(&big, "y-tick"), ["60", "65", "70", "75", "80", "85"]);
    }

    #[test]
    fn beta_is_marked_where_its_size_is_on_the_axis() {
        let svg = known().beta(2 * MIB).to_svg();
        assert_eq!(texts(&svg, "beta-label"), ["β = 2 MiB"]);
        assert_eq!(attr(&svg, "beta", "x1"), tick_x(&svg, "2 MiB"));
        assert_eq!(attr(&svg, "beta", "x2"), tick_x(&svg, "2 MiB"));
        assert_eq!(attr(&svg, "beta", "stroke-dasharray"), "6 4");
        // Without β, no marker; a β off the swept range widens the axis to take it in.
        assert!(!known().to_svg().contains("beta"));
        let wide = known().beta(32 * MIB).to_svg();
        assert_eq!(texts(&wide, "x-tick").last().unwrap(), "32 MiB");
        assert_eq!(texts(&wide, "beta-label"), ["β = 32 MiB"]);
    }

    #[test]
    fn breakpoints_are_dotted_and_the_curve_steps() {
        let svg = known().to_svg();
        // Two changes of the optimum; the tie at 1 MiB is not one.
        assert_eq!(svg.matches(r#"class="breakpoint""#).count(), 2);
        assert!(svg.contains("<title>from 307200 bytes (300 KiB): 12.400 → 11.900 MB</title>"));
        assert!(svg.contains("<title>from 3145728 bytes (3 MiB): 11.900 → 11.500 MB</title>"));
        // Horizontal then vertical, ending at the range's top (8 MiB, the right edge).
        let d = attr(&svg, "curve", "d");
        assert!(d.starts_with("M68.0 ") && d.ends_with(" H696.0"), "{d}");
        assert_eq!(d.matches(" H").count(), 4);
        assert_eq!(d.matches(" V").count(), 3);
    }

    #[test]
    fn crowded_labels_keep_every_fifth_or_second_power() {
        // 1 KiB to 1 GiB: 20 octaves of 31 px; every second power keeps its label.
        let svg = SweepChart::new(&[(KIB, 5_000_000)], 1 << 30).to_svg();
        assert_eq!(
            texts(&svg, "x-tick"),
            [
                "1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB", "4 MiB", "16 MiB",
                "64 MiB", "256 MiB", "1 GiB"
            ]
        );
        // The unlabelled powers keep a shorter tick (the axis is at y = 344).
        assert_eq!(svg.matches(r##"y2="349.0" stroke="#333""##).count(), 11);
        assert_eq!(svg.matches(r##"y2="347.0" stroke="#333""##).count(), 10);
        // 1 B to 1 TiB: 40 octaves of 16 px; every fifth.
        let svg = SweepChart::new(&[(1, 5_000_000)], 1 << 40).to_svg();
        assert_eq!(
            texts(&svg, "x-tick"),
            [
                "1 B", "32 B", "1 KiB", "32 KiB", "1 MiB", "32 MiB", "1 GiB", "32 GiB", "1024 GiB"
            ]
        );
    }

    #[test]
    fn a_narrow_range_labels_its_ends() {
        // 80 to 120 KiB holds no power of two.
        let svg =
            SweepChart::new(&[(80 * KIB, 3_000_000), (100 * KIB, 2_000_000)], 120 * KIB).to_svg();
        assert_eq!(texts(&svg, "x-tick"), ["80 KiB", "120 KiB"]);
        // 60 to 70 KiB holds 64 KiB.
        let svg = SweepChart::new(&[(60 * KIB, 3_000_000)], 70 * KIB).to_svg();
        assert_eq!(texts(&svg, "x-tick"), ["60 KiB", "64 KiB", "70 KiB"]);
    }

    #[test]
    fn names_are_escaped() {
        let svg = known().title("<net> & \"a\"\u{1b}[31m").to_svg();
        assert_eq!(
            texts(&svg, "title"),
            ["&lt;net&gt; &amp; &quot;a&quot;\\u{1b}[31m"]
        );
        assert!(!svg.contains("<net>") && !svg.contains('\u{1b}'));
    }

    #[test]
    fn one_step_and_no_step_draw() {
        // One step over a one-byte range: widened half an octave each way.
        let one = SweepChart::new(&[(64 * KIB, 1_000_000)], 64 * KIB)
            .beta(64 * KIB)
            .to_svg();
        assert_eq!(texts(&one, "x-tick"), ["64 KiB"]);
        assert_eq!(tick_x(&one, "64 KiB"), "382.0");
        assert_eq!(attr(&one, "beta", "x1"), "382.0");
        assert_eq!(
            texts(&one, "y-tick"),
            ["0.90", "0.95", "1.00", "1.05", "1.10"]
        );
        assert!(one.ends_with("</svg>\n"));
        // No steps: the frame, the titles and a note.
        let none = SweepChart::new(&[], 0).beta(MIB).plan_dram(1).to_svg();
        assert_eq!(texts(&none, "note"), ["no steps to draw"]);
        assert!(texts(&none, "x-tick").is_empty() && texts(&none, "y-tick").is_empty());
        assert_eq!(texts(&none, "x-title"), ["buffer (log scale)"]);
        assert!(none.ends_with("</svg>\n"));
        // DRAM 0: still an axis.
        let zero = SweepChart::new(&[(KIB, 0), (2 * KIB, 0)], 4 * KIB).to_svg();
        assert_eq!(
            texts(&zero, "y-tick"),
            ["0.000", "0.001", "0.002", "0.003", "0.004", "0.005"]
        );
    }

    #[test]
    fn from_sweep_reads_the_points() {
        let point = |buffer_bytes, up_to_bytes, dram_bytes| fuselage_pipeline::SweepPoint {
            buffer_bytes,
            up_to_bytes,
            dram_bytes,
            groups: 1,
            latency_cycles: 0,
            latency_seconds: 0.0,
            energy_joules: 0.0,
            proven: true,
        };
        let s = Sweep {
            points: vec![
                point(128 * KIB, 300 * KIB - 1, 12_400_000),
                point(300 * KIB, 8 * MIB, 11_900_000),
            ],
            breakpoints: Vec::new(),
            stopped_at: None,
        };
        assert_eq!(
            SweepChart::from_sweep(&s),
            SweepChart::new(&[(128 * KIB, 12_400_000), (300 * KIB, 11_900_000)], 8 * MIB)
        );
    }
}
