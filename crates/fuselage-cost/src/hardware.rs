//! Accelerator descriptions ([`Accelerator`]), what a group costs in time and energy on one
//! ([`GroupMetrics`], [`PlanMetrics`]), and the objectives a search minimises ([`Objective`]).
//!
//! ## The description
//!
//! An accelerator is read from TOML ([`Accelerator::from_toml`], [`Accelerator::load`]) or
//! taken from the built-in presets ([`Accelerator::presets`]); `docs/hardware.md` cites the
//! source of every preset value. Every field is required:
//!
//! ```toml
//! name = "my-npu"
//! description = "an edge NPU"
//! source = "our datasheet, rev. 3"
//!
//! [buffer]                 # one unified buffer ...
//! unified = "256KiB"       # bytes, or a size with KiB / MiB / GiB
//! # weights = "64KiB"      # ... or a weight and an activation buffer
//! # activations = "192KiB"
//!
//! [precision]              # bytes per element
//! weights = 1
//! activations = 2
//!
//! [dram]
//! bandwidth_gb_per_s = 12.8   # 10^9 bytes per second
//!
//! [compute]
//! clock_mhz = 500
//! peak_macs_per_cycle = 256   # 0: compute time not modelled
//!
//! [energy]                 # picojoules
//! dram_pj_per_byte = 100.0
//! buffer_pj_per_byte = 1.5
//! mac_pj = 0.3
//! ```
//!
//! A bad file gets a [`CostError::Hardware`] naming the file, the line and the field: an
//! unknown or missing field, a negative or zero bandwidth, a buffer given both ways.
//!
//! ## Time and energy of a group (a documented first-order model)
//!
//! - **MACs**: the sum of the members' multiply-accumulates ([`Graph::node_macs`]).
//! - **On-chip traffic**, bytes through the buffer's port: every DRAM byte once (loaded into
//!   or stored from the buffer), every tensor a member produces once (written), every input
//!   port's tensor once (read), and the weights once per pass (once when they stay on chip,
//!   once per tile when BRR streams them). Reuse inside a kernel window is left to the
//!   processing elements' registers.
//! - **Latency**, a roofline: `max(⌈MACs / peak⌉, ⌈F_D · clock / bandwidth⌉)` cycles; a
//!   plan's groups run in sequence, so a plan's latency is the sum over its groups.
//! - **Energy**: `F_D · e_DRAM + traffic · e_buffer + MACs · e_MAC`, kept in whole
//!   femtojoules so that sums are exact.
//!
//! DRAM, latency and energy are additive over groups, so the exact optimiser stays exact for
//! each; EDP (latency × energy) is not (see [`Objective`]).

use crate::buffer::OnChipBuffer;
use crate::config::CostConfig;
use crate::error::{CostError, Result};
use crate::model::GroupCost;
use crate::plan::PlanReport;
use fuselage_ir::{Graph, NodeSet, Plan, Source};
use serde::{Deserialize, Serialize};
use toml::Spanned;

fuselage_ir::kinds! {
    /// What a search minimises.
    ///
    /// DRAM, latency and energy are sums over a plan's groups ([additive](Objective::is_additive)),
    /// so `Optimal` is exact for them. EDP, latency × energy, is not a sum: NSGA-II searches the
    /// (latency, energy) front for it, and `Optimal` answers with the better of its exact
    /// latency and energy optima and proves the product of the two optima as a lower bound.
    ///
    /// ```
    /// use fuselage_cost::Objective;
    /// let o: Objective = "latency".parse()?;
    /// assert!(o.is_additive() && !Objective::Edp.is_additive());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub enum Objective: "objective" {
        /// DRAM bytes, the paper's objective.
        Dram = "dram",
        /// Cycles, the roofline of each group, groups in sequence.
        Latency = "latency",
        /// Femtojoules: DRAM, buffer and MAC energy.
        Energy = "energy",
        /// Energy-delay product: cycles × femtojoules of the whole plan.
        Edp = "edp",
    }
}

impl Objective {
    /// Whether a plan's value is the sum of its groups' values.
    pub fn is_additive(self) -> bool {
        !matches!(self, Objective::Edp)
    }
}

/// Energy per unit, in femtojoules (10⁻¹⁵ J), so that every total is an exact integer.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UnitEnergy {
    /// Per byte moved to or from DRAM.
    pub dram_fj_per_byte: u64,
    /// Per byte through the on-chip buffer's port.
    pub buffer_fj_per_byte: u64,
    /// Per multiply-accumulate.
    pub mac_fj: u64,
}

/// An accelerator: its on-chip buffer and precisions (the [`CostConfig`] the cost models
/// read), DRAM bandwidth, clock, compute and unit energies. See the module docs for the file
/// format and the model of time and energy.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Accelerator {
    /// Its name (a preset's name is what `--hw` takes).
    pub name: String,
    /// One line on what it is.
    pub description: String,
    /// Where its numbers come from.
    pub source: String,
    /// Buffer and element sizes.
    pub config: CostConfig,
    /// DRAM bandwidth in bytes per second.
    pub dram_bytes_per_second: u64,
    /// Clock in hertz.
    pub clock_hz: u64,
    /// Peak MACs per cycle; `None` when compute time is not modelled (the β-only setting).
    pub peak_macs_per_cycle: Option<u64>,
    /// Unit energies.
    pub energy: UnitEnergy,
}

/// The built-in presets' TOML, in the order `fuselage hw list` prints them.
const PRESETS: [(&str, &str); 4] = [
    ("eyeriss-like", include_str!("hardware/eyeriss-like.toml")),
    ("nvdla-small", include_str!("hardware/nvdla-small.toml")),
    ("tpu-v1-like", include_str!("hardware/tpu-v1-like.toml")),
    ("beta-only", include_str!("hardware/beta-only.toml")),
];

/// Parses a size in bytes: plain digits (`131072`), or digits with a binary unit, `KiB`,
/// `MiB` or `GiB` (case-insensitive, optional `B`, spaces allowed): `128KiB` is 131,072
/// bytes. `None` for anything else, an overflow included.
///
/// ```
/// assert_eq!(fuselage_cost::parse_size("2 MiB"), Some(2_097_152));
/// assert_eq!(fuselage_cost::parse_size("1000"), Some(1000));
/// assert_eq!(fuselage_cost::parse_size("12 parsecs"), None);
/// ```
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().ok()?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" | "ki" => 1 << 10,
        "mib" | "mi" => 1 << 20,
        "gib" | "gi" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale)
}

/// A size in a file: an integer of bytes or a string with a unit.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawSize {
    Bytes(i64),
    Text(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBuffer {
    unified: Option<Spanned<RawSize>>,
    weights: Option<Spanned<RawSize>>,
    activations: Option<Spanned<RawSize>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrecision {
    weights: Spanned<i64>,
    activations: Spanned<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDram {
    bandwidth_gb_per_s: Spanned<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCompute {
    clock_mhz: Spanned<f64>,
    peak_macs_per_cycle: Spanned<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEnergy {
    dram_pj_per_byte: Spanned<f64>,
    buffer_pj_per_byte: Spanned<f64>,
    mac_pj: Spanned<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAccelerator {
    name: String,
    description: String,
    source: String,
    buffer: Spanned<RawBuffer>,
    precision: RawPrecision,
    dram: RawDram,
    compute: RawCompute,
    energy: RawEnergy,
}

/// Turns spans into one-line errors naming the origin, the line and the field.
struct Reader<'a> {
    origin: &'a str,
    text: &'a str,
}

impl Reader<'_> {
    fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    fn error<T>(&self, offset: usize, field: &str, message: impl Into<String>) -> Result<T> {
        Err(CostError::Hardware {
            origin: self.origin.to_string(),
            line: self.line(offset),
            field: field.to_string(),
            message: message.into(),
        })
    }

    /// The field an error is about: the one a serde message names (`unknown field `x``,
    /// `missing field `x``), else the key on the line of the error.
    fn field_of(&self, message: &str, offset: usize) -> String {
        if (message.starts_with("unknown field") || message.starts_with("missing field"))
            && let Some(name) = message.split('`').nth(1)
        {
            return name.to_string();
        }
        let start = self.text[..offset.min(self.text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let line = self.text[start..].lines().next().unwrap_or("");
        match line.split_once('=') {
            Some((key, _)) if !key.trim().is_empty() => key.trim().to_string(),
            _ => "file".to_string(),
        }
    }

    fn size(&self, v: &Spanned<RawSize>, field: &str) -> Result<u64> {
        let at = v.span().start;
        let bytes = match v.get_ref() {
            RawSize::Bytes(n) if *n > 0 => *n as u64,
            RawSize::Bytes(n) => return self.error(at, field, format!("{n} is not a size")),
            RawSize::Text(t) => match parse_size(t) {
                Some(n) if n > 0 => n,
                _ => {
                    return self.error(
                        at,
                        field,
                        format!("`{t}` is not a size (bytes, or with KiB / MiB / GiB)"),
                    );
                }
            },
        };
        if bytes > 1 << 40 {
            return self.error(at, field, format!("{bytes} bytes is more than 1 TiB"));
        }
        Ok(bytes)
    }

    fn element(&self, v: &Spanned<i64>, field: &str) -> Result<u64> {
        match *v.get_ref() {
            n @ 1..=16 => Ok(n as u64),
            n => self.error(v.span().start, field, format!("{n} is not 1 to 16 bytes")),
        }
    }

    /// A positive, finite number times `scale`, rounded to an integer of at least 1.
    fn positive(&self, v: &Spanned<f64>, field: &str, scale: f64) -> Result<u64> {
        let x = *v.get_ref();
        if !(x.is_finite() && x > 0.0) {
            return self.error(v.span().start, field, format!("{x} must be positive"));
        }
        let scaled = (x * scale).round();
        if !(1.0..=1e18).contains(&scaled) {
            return self.error(v.span().start, field, format!("{x} is out of range"));
        }
        Ok(scaled as u64)
    }

    /// A non-negative, finite number of picojoules, in whole femtojoules.
    fn energy(&self, v: &Spanned<f64>, field: &str) -> Result<u64> {
        let x = *v.get_ref();
        if !(x.is_finite() && (0.0..=1e9).contains(&x)) {
            return self.error(
                v.span().start,
                field,
                format!("{x} must be 0 to 10^9 picojoules"),
            );
        }
        Ok((x * 1000.0).round() as u64)
    }
}

impl Accelerator {
    /// Reads a description from TOML text; `origin` (a path or a preset name) starts every
    /// error message.
    ///
    /// # Errors
    /// [`CostError::Hardware`], naming the line and the field, for text that is not TOML, an
    /// unknown or missing field, or a value out of range.
    ///
    /// # Example
    /// ```
    /// use fuselage_cost::Accelerator;
    /// let text = std::fs::read_to_string(concat!(
    ///     env!("CARGO_MANIFEST_DIR"),
    ///     "/src/hardware/eyeriss-like.toml"
    /// ))?;
    /// let bad = text.replace("bandwidth_gb_per_s = ", "bandwidth_gb_per_s = -");
    /// let err = Accelerator::from_toml(&bad, "edge.toml").unwrap_err().to_string();
    /// assert!(err.starts_with("edge.toml:") && err.contains("dram.bandwidth_gb_per_s"), "{err}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_toml(text: &str, origin: &str) -> Result<Accelerator> {
        let r = Reader { origin, text };
        let raw: RawAccelerator = match toml::from_str(text) {
            Ok(raw) => raw,
            Err(e) => {
                let at = e.span().map_or(0, |s| s.start);
                let message = e.message().trim().replace('\n', " ");
                return r.error(at, &r.field_of(&message, at), message);
            }
        };
        let b = &raw.buffer;
        let buffer = match (
            &b.get_ref().unified,
            &b.get_ref().weights,
            &b.get_ref().activations,
        ) {
            (Some(u), None, None) => OnChipBuffer::Unified {
                bytes: r.size(u, "buffer.unified")?,
            },
            (None, Some(w), Some(a)) => OnChipBuffer::Split {
                weight_bytes: r.size(w, "buffer.weights")?,
                activation_bytes: r.size(a, "buffer.activations")?,
            },
            _ => {
                return r.error(
                    b.span().start,
                    "buffer",
                    "give either `unified`, or both `weights` and `activations`",
                );
            }
        };
        let config = CostConfig::new(1)?
            .with_buffer(buffer)?
            .with_element_sizes(
                r.element(&raw.precision.weights, "precision.weights")?,
                r.element(&raw.precision.activations, "precision.activations")?,
            )?;
        let peak = &raw.compute.peak_macs_per_cycle;
        let peak_macs_per_cycle = match *peak.get_ref() {
            0 => None,
            n if n > 0 => Some(n as u64),
            n => {
                return r.error(
                    peak.span().start,
                    "compute.peak_macs_per_cycle",
                    format!("{n} must be 0 (not modelled) or positive"),
                );
            }
        };
        Ok(Accelerator {
            name: raw.name,
            description: raw.description,
            source: raw.source,
            config,
            dram_bytes_per_second: r.positive(
                &raw.dram.bandwidth_gb_per_s,
                "dram.bandwidth_gb_per_s",
                1e9,
            )?,
            clock_hz: r.positive(&raw.compute.clock_mhz, "compute.clock_mhz", 1e6)?,
            peak_macs_per_cycle,
            energy: UnitEnergy {
                dram_fj_per_byte: r
                    .energy(&raw.energy.dram_pj_per_byte, "energy.dram_pj_per_byte")?,
                buffer_fj_per_byte: r
                    .energy(&raw.energy.buffer_pj_per_byte, "energy.buffer_pj_per_byte")?,
                mac_fj: r.energy(&raw.energy.mac_pj, "energy.mac_pj")?,
            },
        })
    }

    /// Reads a description from a TOML file.
    ///
    /// # Errors
    /// [`CostError::HardwareIo`] when the file cannot be read; as
    /// [`Accelerator::from_toml`] otherwise.
    pub fn load(path: &std::path::Path) -> Result<Accelerator> {
        let text = std::fs::read_to_string(path).map_err(|e| CostError::HardwareIo {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Accelerator::from_toml(&text, &path.display().to_string())
    }

    /// The presets' names, in order.
    pub fn preset_names() -> Vec<&'static str> {
        PRESETS.iter().map(|(name, _)| *name).collect()
    }

    /// The preset called `name`, or `None`.
    pub fn preset(name: &str) -> Option<Accelerator> {
        let (_, text) = PRESETS.iter().find(|(n, _)| *n == name)?;
        // The presets are checked by a test; a broken one would be a build defect.
        Accelerator::from_toml(text, name).ok()
    }

    /// The TOML of the preset called `name`, as shipped.
    pub fn preset_toml(name: &str) -> Option<&'static str> {
        PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// Every preset, in order.
    pub fn presets() -> Vec<Accelerator> {
        PRESETS
            .iter()
            .filter_map(|(name, _)| Accelerator::preset(name))
            .collect()
    }

    /// A preset by name, or else a file by path (what `--hw` takes).
    ///
    /// # Errors
    /// [`CostError::UnknownHardware`] when `spec` is neither; as [`Accelerator::load`] for a
    /// file that does not read.
    pub fn resolve(spec: &str) -> Result<Accelerator> {
        if let Some(hw) = Accelerator::preset(spec) {
            return Ok(hw);
        }
        let path = std::path::Path::new(spec);
        if path.exists() || spec.ends_with(".toml") {
            return Accelerator::load(path);
        }
        Err(CostError::UnknownHardware {
            given: spec.to_string(),
            presets: PRESETS.iter().map(|(n, _)| n.to_string()).collect(),
        })
    }

    /// The β-only setting at another buffer and element size: what the program uses when no
    /// `--hw` is given. DRAM bytes are the only cost (one byte a cycle, one picojoule a byte),
    /// so latency and energy order plans as DRAM does. The rates are those of the
    /// `beta-only` preset (a test holds the two equal).
    pub fn beta_only(config: CostConfig) -> Accelerator {
        let (description, source) = match Accelerator::preset("beta-only") {
            Some(p) => (p.description, p.source),
            None => (String::new(), String::new()),
        };
        Accelerator {
            name: "beta-only".into(),
            description,
            source,
            config,
            dram_bytes_per_second: 1_000_000_000,
            clock_hz: 1_000_000_000,
            peak_macs_per_cycle: None,
            energy: UnitEnergy {
                dram_fj_per_byte: 1000,
                buffer_fj_per_byte: 0,
                mac_fj: 0,
            },
        }
    }

    /// What each node of `g` does, apart from any plan, at this accelerator's activation
    /// element size: a table a search sums over a group's members
    /// ([`Activity::of_group`]) instead of walking the graph for every group it scores.
    pub fn activities(&self, g: &Graph) -> Vec<Activity> {
        let ab = self.config.activation_element_bytes();
        let bytes = |s: Source| g.shape_of(s).elements().saturating_mul(ab);
        g.node_ids()
            .map(|v| Activity {
                macs: g.node_macs(v),
                written_bytes: bytes(Source::Node(v)),
                read_bytes: g
                    .node(v)
                    .inputs
                    .iter()
                    .fold(0u64, |acc, &s| acc.saturating_add(bytes(s))),
            })
            .collect()
    }

    /// What `group` costs in time and energy, given its `cost` under a model at this
    /// accelerator's [`config`](Accelerator::config). See the module docs for the model.
    ///
    /// # Example
    /// ```
    /// use fuselage_cost::{Accelerator, CostModel, Lbdf};
    /// use fuselage_ir::{ConvAttrs, GraphBuilder, NodeSet, Op, TensorShape};
    /// let mut b = GraphBuilder::new("tiny");
    /// let x = b.input("input", TensorShape::nchw(4, 8, 8))?;
    /// b.node("c", Op::Conv(ConvAttrs::square(4, 1, 1, 0, 1)), &[x])?;
    /// let g = b.finish()?;
    /// let hw = Accelerator::preset("beta-only").unwrap();
    /// let all = NodeSet::full(g.len());
    /// let cost = Lbdf::new(hw.config).evaluate(&g, &all)?;
    /// let m = hw.group_metrics(&g, &all, &cost);
    /// assert_eq!(m.macs, 4 * 8 * 8 * 4);
    /// // β-only: one cycle and one picojoule per DRAM byte, nothing else.
    /// assert_eq!((m.latency_cycles, m.energy_fj), (cost.dram_bytes, 1000 * cost.dram_bytes));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn group_metrics(&self, g: &Graph, group: &NodeSet, cost: &GroupCost) -> GroupMetrics {
        let table = self.activities(g);
        self.metrics(Activity::of_group(&table, group), cost)
    }

    /// The metrics of a group that does `a` and costs `cost`.
    pub fn metrics(&self, a: Activity, cost: &GroupCost) -> GroupMetrics {
        let passes = match cost.tiling {
            Some(t) if !t.weights_resident => t.tiles.max(1),
            _ => 1,
        };
        let buffer_traffic_bytes = cost
            .dram_bytes
            .saturating_add(a.written_bytes)
            .saturating_add(a.read_bytes)
            .saturating_add(cost.weight_bytes.saturating_mul(passes));
        let compute_cycles = self
            .peak_macs_per_cycle
            .map_or(0, |p| a.macs.div_ceil(p.max(1)));
        let dram_cycles = self.dram_cycles(cost.dram_bytes);
        let e = &self.energy;
        let energy_fj = cost
            .dram_bytes
            .saturating_mul(e.dram_fj_per_byte)
            .saturating_add(buffer_traffic_bytes.saturating_mul(e.buffer_fj_per_byte))
            .saturating_add(a.macs.saturating_mul(e.mac_fj));
        GroupMetrics {
            macs: a.macs,
            buffer_traffic_bytes,
            compute_cycles,
            dram_cycles,
            latency_cycles: compute_cycles.max(dram_cycles),
            energy_fj,
        }
    }

    /// `⌈bytes · clock / bandwidth⌉`: the cycles DRAM takes to move `bytes`.
    pub fn dram_cycles(&self, bytes: u64) -> u64 {
        let num = u128::from(bytes) * u128::from(self.clock_hz);
        let den = u128::from(self.dram_bytes_per_second.max(1));
        u64::try_from(num.div_ceil(den)).unwrap_or(u64::MAX)
    }

    /// A group's value under an additive `objective` (DRAM bytes, cycles or femtojoules),
    /// given what it does and what it costs; for [`Objective::Edp`], which no group has
    /// alone, its energy.
    pub fn group_value(&self, objective: Objective, a: Activity, cost: &GroupCost) -> u64 {
        match objective {
            Objective::Dram => cost.dram_bytes,
            Objective::Latency => self.metrics(a, cost).latency_cycles,
            Objective::Energy | Objective::Edp => self.metrics(a, cost).energy_fj,
        }
    }

    /// The totals of `plan`, whose groups `report` costs (in the same order).
    pub fn plan_metrics(&self, g: &Graph, plan: &Plan, report: &PlanReport) -> PlanMetrics {
        let table = self.activities(g);
        let mut total = PlanMetrics {
            clock_hz: self.clock_hz,
            ..PlanMetrics::default()
        };
        for (group, cost) in plan.groups.iter().zip(&report.groups) {
            total.add(&self.metrics(Activity::of_group(&table, group), cost));
        }
        total
    }

    /// Cycles in seconds at this accelerator's clock.
    pub fn seconds(&self, cycles: u64) -> f64 {
        cycles as f64 / self.clock_hz.max(1) as f64
    }
}

/// What a node or a group does whatever the plan: its MACs, the bytes of the tensors it
/// writes, and the bytes its input ports read (each port its whole tensor once), at an
/// activation element size.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Activity {
    /// Multiply-accumulates.
    pub macs: u64,
    /// Bytes of the tensors written.
    pub written_bytes: u64,
    /// Bytes read through input ports.
    pub read_bytes: u64,
}

impl Activity {
    /// Adds `other`.
    pub fn add(&mut self, other: &Activity) {
        self.macs = self.macs.saturating_add(other.macs);
        self.written_bytes = self.written_bytes.saturating_add(other.written_bytes);
        self.read_bytes = self.read_bytes.saturating_add(other.read_bytes);
    }

    /// The sum over `group`'s members of a per-node `table` ([`Accelerator::activities`]).
    pub fn of_group(table: &[Activity], group: &NodeSet) -> Activity {
        let mut a = Activity::default();
        for v in group.iter() {
            if let Some(x) = table.get(v.index()) {
                a.add(x);
            }
        }
        a
    }
}

/// What one group costs in time and energy on an [`Accelerator`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GroupMetrics {
    /// Multiply-accumulates.
    pub macs: u64,
    /// Bytes through the on-chip buffer's port.
    pub buffer_traffic_bytes: u64,
    /// `⌈MACs / peak⌉` (0 when compute is not modelled).
    pub compute_cycles: u64,
    /// `⌈F_D · clock / bandwidth⌉`.
    pub dram_cycles: u64,
    /// The roofline: the larger of the two.
    pub latency_cycles: u64,
    /// Femtojoules.
    pub energy_fj: u64,
}

/// A plan's totals on an [`Accelerator`]: the sums of its groups' [`GroupMetrics`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PlanMetrics {
    /// Multiply-accumulates.
    pub macs: u64,
    /// Bytes through the on-chip buffer's port.
    pub buffer_traffic_bytes: u64,
    /// Cycles, groups in sequence.
    pub latency_cycles: u64,
    /// Femtojoules.
    pub energy_fj: u64,
    /// The clock the cycles are counted at, in hertz.
    pub clock_hz: u64,
}

impl PlanMetrics {
    /// Adds one group.
    pub fn add(&mut self, m: &GroupMetrics) {
        self.macs = self.macs.saturating_add(m.macs);
        self.buffer_traffic_bytes = self
            .buffer_traffic_bytes
            .saturating_add(m.buffer_traffic_bytes);
        self.latency_cycles = self.latency_cycles.saturating_add(m.latency_cycles);
        self.energy_fj = self.energy_fj.saturating_add(m.energy_fj);
    }

    /// Latency in seconds.
    pub fn latency_seconds(&self) -> f64 {
        self.latency_cycles as f64 / self.clock_hz.max(1) as f64
    }

    /// Energy in joules.
    pub fn energy_joules(&self) -> f64 {
        self.energy_fj as f64 * 1e-15
    }

    /// The energy-delay product in cycles × femtojoules (exact).
    pub fn edp(&self) -> u128 {
        u128::from(self.latency_cycles) * u128::from(self.energy_fj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_loads() {
        for name in Accelerator::preset_names() {
            let text = Accelerator::preset_toml(name).unwrap();
            let hw = Accelerator::from_toml(text, name).unwrap();
            assert_eq!(hw.name, name);
            assert!(!hw.source.is_empty() && !hw.description.is_empty());
        }
        assert_eq!(Accelerator::presets().len(), PRESETS.len());
    }

    fn err(text: &str) -> String {
        Accelerator::from_toml(text, "hw.toml")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn malformed_files_name_the_field_and_line() {
        let good = Accelerator::preset_toml("nvdla-small").unwrap();
        let line_of = |needle: &str| good.lines().position(|l| l.contains(needle)).unwrap() + 1;
        // Unknown field.
        let t = good.replace("[dram]\n", "[dram]\nbandwith = 3\n");
        let e = err(&t);
        assert!(
            e.starts_with(&format!("hw.toml:{}: bandwith:", line_of("[dram]") + 1)),
            "{e}"
        );
        // Negative bandwidth.
        let t = good.replace("bandwidth_gb_per_s = ", "bandwidth_gb_per_s = -");
        let e = err(&t);
        assert!(
            e.starts_with(&format!(
                "hw.toml:{}: dram.bandwidth_gb_per_s:",
                line_of("bandwidth_gb_per_s")
            )),
            "{e}"
        );
        // Missing buffer.
        let start = good.find("[buffer]").unwrap();
        let end = good[start..].find("\n\n").unwrap() + start;
        let t = format!("{}{}", &good[..start], &good[end..]);
        assert!(
            err(&t).contains(": buffer: missing field `buffer`"),
            "{}",
            err(&t)
        );
        // A buffer given both ways.
        let t = good.replace("[buffer]\n", "[buffer]\nweights = 1024\n");
        assert!(err(&t).contains(": buffer: give either"), "{}", err(&t));
        // Not TOML at all: the line of the error.
        assert!(
            err("name = \n").starts_with("hw.toml:1: "),
            "{}",
            err("name = \n")
        );
        // A bad size names its field.
        let t = good.replace("unified = ", "unified = \"12 parsecs\" # ");
        assert!(
            err(&t).contains(": buffer.unified: `12 parsecs`"),
            "{}",
            err(&t)
        );
    }

    #[test]
    fn beta_only_is_its_preset() {
        let preset = Accelerator::preset("beta-only").unwrap();
        assert_eq!(Accelerator::beta_only(preset.config), preset);
    }

    #[test]
    fn dram_cycles_round_up() {
        let mut hw = Accelerator::preset("beta-only").unwrap();
        hw.clock_hz = 3;
        hw.dram_bytes_per_second = 2;
        assert_eq!(hw.dram_cycles(5), 8); // 7.5 cycles
        assert_eq!(hw.dram_cycles(0), 0);
    }
}
