//! # fuselage-report
//!
//! The plan report: one self-contained HTML file, working offline, that a compiler engineer
//! opens to see a fusion plan and why it is what it is.
//!
//! - **Summary**: the network, the cost model and accelerator, DRAM, MBU, latency and energy,
//!   and the gaps to the lower bound and to the exact optimum.
//! - **The plan overview** ([`overview`]): one row per repeated block (a transformer layer, a
//!   residual block), a box per group as wide as its DRAM and coloured by its fill of β. It
//!   is drawn on any network, and it is what the first screen shows.
//! - **The network**, each node filled with its group's colour, laid out by `layout-rs` (a
//!   layered, Graphviz-style layout: edges route around nodes and end in arrowheads), up to
//!   a few hundred nodes. Its view opens at full size on the first node, and pans (drag,
//!   arrows) and zooms (wheel, `+`/`−`, buttons).
//! - **A sortable table of groups**, marking those that differ from the optimal plan.
//! - **A panel per group**, opened by clicking its row or any of its nodes: its cost terms
//!   (`explain_cost`: the weights and each tensor's rows × row bytes and why it keeps them),
//!   the edges the exact cost explainer ranks first, and, under LBDF, the buffer occupancy
//!   timeline the row-level simulator measured.
//! - **The buffer sweep** (built-in cost models, unified buffers): optimal DRAM from β/8 to 2β,
//!   drawn by [`chart::SweepChart`] (the chart of `fuselage sweep --svg` too): tick labels in
//!   KiB/MiB and MB on both axes, a dot at each breakpoint, dashed lines at the plan's β and
//!   at its DRAM.
//!
//! ## Design
//!
//! Everything is computed here, in Rust, and embedded as one JSON document; the page's script
//! only draws tables and panels from it (with `textContent`, never HTML from the data) and
//! sorts. The drawings (the plan overview, the network, the sweep) are SVG made in Rust and
//! put in the page as they are. The script records every error in `window.fuselageErrors`,
//! so a browser test can assert there were none. Nodes of the drawing carry `data-group` and
//! `data-node`, and the overview's boxes `data-group`.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod chart;

use fuselage_cost::{
    Accelerator, BufferSimulator, CostFamily, CostModel, OnChipBuffer, PlanFile, evaluate_plan,
};
use fuselage_explain::{CostExplainer, Explainer, MAX_EXPLAINED_NODES, explain_cost};
use fuselage_ir::{Graph, Plan, human_size};
use fuselage_pipeline::{Planner, Reference, sweep_partial};
use rand::SeedableRng;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

mod markup;
pub mod overview;

/// What can go wrong making a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The plan or a group could not be costed.
    #[error(transparent)]
    Cost(#[from] fuselage_cost::CostError),
    /// The explainer failed.
    #[error(transparent)]
    Explain(#[from] fuselage_explain::ExplainError),
    /// The optimiser or the sweep failed.
    #[error(transparent)]
    Pipeline(#[from] fuselage_pipeline::PipelineError),
    /// The plan is not a plan of the graph.
    #[error(transparent)]
    Ir(#[from] fuselage_ir::IrError),
}

/// `Result` with [`ReportError`].
pub type Result<T> = std::result::Result<T, ReportError>;

/// A report to render: the graph, the cost model (cached is best), the plan, and options.
pub struct Report<'a> {
    graph: &'a Graph,
    model: Arc<dyn CostModel>,
    plan: &'a Plan,
    family: Option<Arc<dyn CostFamily>>,
    hw: Accelerator,
    sweep: bool,
    optimum_limit: Duration,
    sweep_limit: Duration,
    max_drawn_nodes: usize,
}

impl<'a> Report<'a> {
    /// A report of `plan` over `graph` under `model`, on the β-only accelerator of the
    /// model's configuration, with the sweep and a 10 s limit on the optimum.
    pub fn new(graph: &'a Graph, model: Arc<dyn CostModel>, plan: &'a Plan) -> Self {
        let hw = Accelerator::beta_only(*model.config());
        Report {
            graph,
            model,
            plan,
            family: None,
            hw,
            sweep: true,
            optimum_limit: Duration::from_secs(10),
            sweep_limit: Duration::from_secs(3),
            max_drawn_nodes: 200,
        }
    }

    /// The family `model` belongs to (the sweep solves the network under it at other
    /// buffers): a built-in [`CostKind`](fuselage_cost::CostKind), or the caller's own
    /// [`CostFamily`]. Without it the report has no sweep.
    pub fn family(mut self, family: impl CostFamily + 'static) -> Self {
        self.family = Some(Arc::new(family));
        self
    }

    /// Counts latency and energy on `hw`.
    pub fn hardware(mut self, hw: Accelerator) -> Self {
        self.hw = hw;
        self
    }

    /// Whether to include the buffer sweep (default yes).
    pub fn with_sweep(mut self, on: bool) -> Self {
        self.sweep = on;
        self
    }

    /// How long the exact optimum may take (default 10 s; past it, its best plan, marked).
    pub fn optimum_limit(mut self, limit: Duration) -> Self {
        self.optimum_limit = limit;
        self
    }

    /// How long the buffer sweep may take (default 3 s): past it, the report draws the part
    /// of the curve solved by then, from 2β down ([`sweep_partial`]), and says where it
    /// stops. Most networks finish well within it; Llama-3.2-1B at 2,048 tokens and 2 MiB
    /// takes 3.6 s for its 14 steps (release build; 22.9 s for the 28 steps up to 4β).
    pub fn sweep_limit(mut self, limit: Duration) -> Self {
        self.sweep_limit = limit;
        self
    }

    /// Draw the network only up to `n` nodes (default 200): the layered layout's crossing
    /// reduction grows fast with the long edges of wide networks.
    pub fn max_drawn_nodes(mut self, n: usize) -> Self {
        self.max_drawn_nodes = n;
        self
    }

    /// The HTML.
    ///
    /// # Errors
    /// When the plan is not a partition of the graph into connected groups with an acyclic
    /// graph of groups, or the cost model fails.
    ///
    /// # Example
    /// ```
    /// use fuselage_cost::{Cached, CostConfig, CostKind, layer_by_layer};
    /// use std::sync::Arc;
    /// let g = fuselage_zoo::build_at("resnet18", 64)?;
    /// let model = Arc::new(Cached::new(CostKind::Lbdf.model(CostConfig::kib(64)?)));
    /// let plan = layer_by_layer(&g);
    /// let html = fuselage_report::Report::new(&g, model, &plan).family(CostKind::Lbdf).render()?;
    /// assert!(html.starts_with("<!DOCTYPE html>") && html.contains("data-group=\"0\""));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn render(&self) -> Result<String> {
        let g = self.graph;
        let model = self.model.as_ref();
        let report = evaluate_plan(model, g, self.plan)?;
        let file = PlanFile::from_report(model, g, self.plan, &report)
            .with_hardware(&self.hw, g, self.plan, &report);
        let metrics = self.hw.plan_metrics(g, self.plan, &report);
        let optimum = Planner::with_model(g, self.model.clone())
            .hardware(self.hw.clone())
            .search(fuselage_search::SearchKind::Optimal)
            .reference(Reference::Off)
            .time_limit(self.optimum_limit)
            .run()?;
        let diff = file.diff(&optimum.plan_file);
        let differs = differing_groups(report.dram_bytes, optimum.plan_file.dram_bytes, &diff);
        let explainer = CostExplainer::new();
        let beta = model.config().buffer_bytes();
        let mut groups = Vec::with_capacity(self.plan.len());
        for (gi, (set, entry)) in self.plan.groups.iter().zip(&file.groups).enumerate() {
            // Past MAX_EXPLAINED_NODES a group's terms and explanation (quadratic in the group)
            // are left out, and its panel says so.
            let explained = set.len() <= MAX_EXPLAINED_NODES;
            let terms = explained.then(|| explain_cost(model, g, set)).transpose()?;
            let mut key = entry.nodes.clone();
            key.sort();
            let edges: Vec<Value> = if explained && set.len() > 1 {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
                let e = explainer.explain(g, set, model, &mut rng)?;
                e.ranking()
                    .iter()
                    .take(5)
                    .map(|&i| {
                        let (u, v) = e.edges[i];
                        json!({"from": g.node(u).name, "to": g.node(v).name, "score": e.edge_scores[i]})
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let timeline: Vec<(u64, u64)> = if model.name() == "lbdf" {
                let sim = BufferSimulator::new(*model.config()).run(g, set)?;
                downsample(&sim.timeline, 300)
            } else {
                Vec::new()
            };
            groups.push(json!({
                "index": gi,
                "nodes": entry.nodes,
                "buffer_bytes": entry.buffer_bytes,
                "dram_bytes": entry.dram_bytes,
                "valid": entry.valid,
                "unfusable": entry.unfusable,
                "latency_cycles": entry.latency_cycles,
                "energy_joules": entry.energy_joules,
                "differs_from_optimal": differs.contains(&key),
                "terms": terms,
                "edges": edges,
                "timeline": timeline,
            }));
        }
        let mut sweep_note = String::new();
        let mut sweep_chart = None;
        let sweep_points: Vec<Value> = match (&self.family, self.sweep, model.config().buffer()) {
            (Some(family), true, OnChipBuffer::Unified { bytes }) => {
                let from = (bytes / 8).max(1024);
                let to = bytes.saturating_mul(2).max(from);
                match sweep_partial(g, family.as_ref(), &self.hw, from, to, self.sweep_limit) {
                    Ok(s) if s.points.is_empty() => {
                        sweep_note = format!(
                            "The sweep was left out: no step of it was solved within its time limit ({:.1} s).",
                            self.sweep_limit.as_secs_f64()
                        );
                        Vec::new()
                    }
                    Ok(s) => {
                        if let Some(at) = s.stopped_at {
                            sweep_note = format!(
                                "The sweep stopped at its time limit ({:.1} s): it covers {} to {}, not down to {}. `fuselage sweep` draws the whole curve.",
                                self.sweep_limit.as_secs_f64(),
                                human_size(at),
                                human_size(to),
                                human_size(from)
                            );
                        }
                        let title = format!(
                            "{}: optimal DRAM against buffer ({})",
                            g.name(),
                            family.name()
                        );
                        let chart = chart::SweepChart::from_sweep(&s)
                            .title(&title)
                            .beta(bytes)
                            .plan_dram(report.dram_bytes);
                        sweep_chart = Some(chart.to_svg());
                        s.points
                            .iter()
                            .map(|p| json!([p.buffer_bytes, p.dram_bytes]))
                            .collect()
                    }
                    Err(e) => {
                        sweep_note = format!("The sweep was left out: {e}.");
                        Vec::new()
                    }
                }
            }
            _ => Vec::new(),
        };
        let data = json!({
            "model": g.name(),
            "cost_model": model.name(),
            "hardware": self.hw.name,
            "buffer_bytes": beta,
            "buffer": model.config().buffer(),
            "groups": groups,
            "dram_bytes": report.dram_bytes,
            "fusable_dram_bytes": report.fusable_dram_bytes,
            "max_buffer_bytes": report.max_buffer_bytes,
            "latency_seconds": metrics.latency_seconds(),
            "energy_joules": metrics.energy_joules(),
            "lower_bound_bytes": optimum.lower_bound,
            "optimal_dram_bytes": optimum.plan_file.dram_bytes,
            "optimal_proven": optimum.reference.is_some_and(|r| r.proven),
            "optimal_groups": optimum.plan_file.groups.len(),
            "groups_differing": diff.only_in_a.len(),
            "sweep": sweep_points,
            "sweep_note": sweep_note,
            "max_explained": MAX_EXPLAINED_NODES,
        });
        let boxes: Vec<overview::GroupBox<'_>> = self
            .plan
            .groups
            .iter()
            .zip(&file.groups)
            .enumerate()
            .map(|(index, (set, entry))| overview::GroupBox {
                index,
                first: entry.nodes.first().map_or("", String::as_str),
                order: set.first().map_or(usize::MAX, |v| v.index()),
                nodes: set.len(),
                dram_bytes: entry.dram_bytes,
                buffer_bytes: entry.buffer_bytes,
                valid: entry.valid,
                unfusable: entry.unfusable,
            })
            .collect();
        let plan_picture = overview::overview(&boxes, beta);
        let drawing = if g.len() <= self.max_drawn_nodes {
            draw(g, self.plan)
        } else {
            format!(
                "<p>The network has {} nodes; drawings stop at {}.</p>",
                g.len(),
                self.max_drawn_nodes
            )
        };
        let sweep = sweep_section(sweep_chart.as_deref(), &sweep_note);
        Ok(page(&data, &plan_picture, &drawing, &sweep))
    }
}

/// The sweep's heading and chart (with the note of a sweep cut short), or its note when it
/// was left out; nothing without either.
fn sweep_section(chart: Option<&str>, note: &str) -> String {
    let note = if note.is_empty() {
        String::new()
    } else {
        format!("<p>{}</p>", markup::text(note))
    };
    let body = match chart {
        Some(svg) => format!(
            "<p>Optimal DRAM against a unified buffer from β/8 to 2β: a dot where the optimum \
             changes, dashed lines at this plan's β and at its DRAM.</p>\n{note}{svg}"
        ),
        None if !note.is_empty() => note,
        None => return String::new(),
    };
    format!("<h2 id=\"sweep-title\">Buffer sweep</h2>\n<div id=\"sweep\">{body}</div>")
}

/// At most `n` points of a timeline, evenly spaced, the peak kept.
fn downsample(t: &[(u64, u64)], n: usize) -> Vec<(u64, u64)> {
    if t.len() <= n {
        return t.to_vec();
    }
    let step = t.len().div_ceil(n);
    let peak = t
        .iter()
        .enumerate()
        .max_by_key(|(_, p)| p.1)
        .map(|(i, _)| i);
    t.iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0 || Some(*i) == peak)
        .map(|(_, p)| *p)
        .collect()
}

/// A light, distinct colour for group `i` (golden-angle hues).
fn colour(i: usize) -> u32 {
    let h = (i as f64 * 137.508) % 360.0;
    let (s, l) = (0.55, 0.80);
    let c = (1.0 - (2.0 * l - 1.0_f64).abs()) * s;
    let x = c * (1.0 - ((h / 60.0) % 2.0 - 1.0).abs());
    let m = l - c / 2.0;
    let (r, g, b) = match (h / 60.0) as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u32;
    (byte(r) << 24) | (byte(g) << 16) | (byte(b) << 8) | 0xff
}

/// The network as SVG, laid out by layout-rs, nodes filled by group and tagged with
/// `data-group` and `data-node`.
fn draw(g: &Graph, plan: &Plan) -> String {
    use layout::backends::svg::SVGWriter;
    use layout::core::base::Orientation;
    use layout::core::color::Color;
    use layout::core::geometry::Point;
    use layout::core::style::StyleAttr;
    use layout::std_shapes::shapes::{Arrow, Element, ShapeKind};
    use layout::topo::layout::VisualGraph;
    let owner = plan.graph(g);
    let mut vg = VisualGraph::new(Orientation::TopToBottom);
    let mut handles = Vec::with_capacity(g.len());
    for (id, node) in g.nodes() {
        let gi = owner.owner(id).map_or(0, |x| x.index());
        let label = format!(
            "{} · {}",
            node.op.kind().name(),
            fuselage_explain::render::short_name(&fuselage_ir::escape(&node.name), 28)
        );
        let look = StyleAttr::new(Color::fast("black"), 1, Some(Color::new(colour(gi))), 4, 11);
        let props = format!(
            "class=\"node\" data-group=\"{gi}\" data-node=\"{}\"",
            markup::text(&node.name)
        );
        let elem = Element::create_with_properties(
            ShapeKind::new_box(&label),
            look,
            Orientation::LeftToRight,
            Point::new(230.0, 30.0),
            props,
        );
        handles.push(vg.add_node(elem));
    }
    for (id, _) in g.nodes() {
        for u in g.producers(id) {
            vg.add_edge(Arrow::simple(""), handles[u.index()], handles[id.index()]);
        }
    }
    let mut svg = SVGWriter::new();
    vg.do_it(false, false, false, &mut svg);
    svg.finalize()
}

/// `data` as JSON that no text can end or derail inside a script element: `<`, `>` and `&`
/// occur only inside its strings, where they are written `\u003c`, `\u003e`, `\u0026`. A
/// node named `<!--<script>` would otherwise put the HTML parser in the script's "double
/// escaped" state, where `</script>` no longer ends it, and the page's script vanished.
fn embedded_json(data: &Value) -> String {
    let text = data.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
    out
}

fn page(data: &Value, overview: &str, drawing: &str, sweep: &str) -> String {
    let json = embedded_json(data);
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>fuselage plan report</title>
<script>window.fuselageErrors=[];window.addEventListener('error',function(e){{window.fuselageErrors.push(String(e.message))}});(function(){{var o=console.error;console.error=function(){{window.fuselageErrors.push(Array.prototype.join.call(arguments,' '));o.apply(console,arguments)}}}})();</script>
<style>
body{{font-family:system-ui,sans-serif;margin:1.5em;color:#222}}
h1{{font-size:1.4em}} h2{{font-size:1.15em;margin-top:1.5em}}
table{{border-collapse:collapse;font-size:.85em}} th,td{{border:1px solid #ccc;padding:.25em .5em;text-align:right}}
th{{background:#f0f0f0;cursor:pointer;user-select:none}} td.l{{text-align:left}}
tr.sel{{outline:2px solid #d33}} tr.grp{{cursor:pointer}} .diff{{color:#b40}}
#overview{{overflow:auto;max-height:60vh;border:1px solid #ddd;padding:4px}} #overview svg{{max-width:100%;height:auto}}
#drawing{{border:1px solid #ddd;overflow:hidden;position:relative}} #drawing.zoomable{{height:70vh;cursor:grab}} #drawing:focus{{outline:2px solid #36c}} #drawing>svg{{width:100%;height:100%;display:block}} #drawing g.node{{cursor:pointer}}
.zoom{{position:absolute;right:6px;top:6px;display:flex;gap:4px}} .zoom button{{font-size:1em;min-width:2em}}
#drawing text{{pointer-events:none}}
#drawing g.node.sel rect{{stroke:#d33;stroke-width:3}}
#panel{{display:none;position:fixed;right:1em;top:1em;width:min(46em,48vw);max-height:92vh;overflow:auto;background:#fff;border:2px solid #555;padding:1em;box-shadow:0 2px 12px #0004}}
#panel h3{{margin-top:0}} .close{{float:right;cursor:pointer;border:1px solid #999;padding:0 .4em}}
dl{{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}} dt{{font-weight:600}}
</style></head><body>
<h1 id="title"></h1>
<dl id="summary"></dl>
<h2>The plan</h2>
<p>One row per repeated block (a layer, a residual block); each box a group, as wide as its DRAM, from pale (little of β used) to dark blue (β full); red where it does not fit, grey an unfusable node on its own. Click a box to open its group.</p>
<div id="overview">{overview}</div>
<h2>The network, coloured by group</h2>
<p>Click a node or a row to open its group. Drag to pan, scroll or <kbd>+</kbd>/<kbd>−</kbd> to zoom, arrows to move, <kbd>0</kbd> to go back to the top.</p>
<div id="drawing" tabindex="0">{drawing}</div>
<h2>Groups</h2>
<table id="groups"><thead><tr>
<th data-k="index">#</th><th data-k="n">nodes</th><th data-k="first">first node</th><th data-k="buffer_bytes">F_β (B)</th>
<th data-k="dram_bytes">DRAM (B)</th><th data-k="latency_cycles">latency (cycles)</th><th data-k="energy_joules">energy</th><th data-k="status">status</th>
</tr></thead><tbody></tbody></table>
{sweep}
<div id="panel"></div>
<script type="application/json" id="data">{json}</script>
<script>
(function(){{
var D=JSON.parse(document.getElementById('data').textContent);
function el(t,txt,cls){{var e=document.createElement(t);if(txt!==undefined&&txt!==null)e.textContent=String(txt);if(cls)e.className=cls;return e}}
function size(b){{if(b>=1048576)return(b/1048576).toFixed(2)+' MiB';if(b>=1024)return(b/1024).toFixed(1)+' KiB';return b+' B'}}
function pct(a,b){{return b>0?((a/b-1)*100).toFixed(2)+'%':'n/a'}}
function num(n){{return n===null||n===undefined?'':Number(n).toLocaleString('en-US')}}
function unit(v,units){{var a=Math.abs(v);for(var i=0;i<units.length;i++){{if(a>=units[i][0]||i==units.length-1)return(v/units[i][0]).toPrecision(4)+' '+units[i][1]}}}}
function joules(j){{return j===null||j===undefined?'':unit(j,[[1,'J'],[1e-3,'mJ'],[1e-6,'µJ'],[1e-9,'nJ']])}}
function seconds(t){{return unit(t,[[1,'s'],[1e-3,'ms'],[1e-6,'µs'],[1e-9,'ns']])}}
function mb(b){{return (b/1e6).toFixed(3)+' MB ('+num(b)+' B)'}}
document.getElementById('title').textContent='fuselage plan report: '+D.model;
var S=document.getElementById('summary');
function row(k,v){{S.appendChild(el('dt',k));S.appendChild(el('dd',v))}}
row('cost model',D.cost_model);row('hardware',D.hardware);row('buffer',size(D.buffer_bytes));
row('groups',D.groups.length);row('total DRAM',mb(D.dram_bytes));
row('fusable DRAM',mb(D.fusable_dram_bytes));row('MBU',size(D.max_buffer_bytes)+' ('+num(D.max_buffer_bytes)+' B)');
row('latency',seconds(D.latency_seconds));row('energy',joules(D.energy_joules));
row('lower bound',(D.lower_bound_bytes/1e6).toFixed(3)+' MB (gap +'+pct(D.dram_bytes,D.lower_bound_bytes).replace('+','')+')');
row(D.optimal_proven?'optimal':'best of Optimal (time limit)',(D.optimal_dram_bytes/1e6).toFixed(3)+' MB (gap '+pct(D.dram_bytes,D.optimal_dram_bytes)+'; '+(D.dram_bytes<=D.optimal_dram_bytes?(D.groups_differing?'the same DRAM, grouped differently in '+D.groups_differing+' groups':'the same plan'):D.groups_differing+' groups differ from its '+D.optimal_groups)+')');
var tb=document.querySelector('#groups tbody');
function status(x){{return x.unfusable?'unfusable':(x.valid?'fits':'does not fit')}}
D.groups.forEach(function(x){{x.n=x.nodes.length;x.first=x.nodes[0];x.status=status(x)+(x.differs_from_optimal?' · ≠ optimal':'')}});
function fill(){{tb.textContent='';D.groups.forEach(function(x){{var r=el('tr',null,'grp');r.dataset.group=x.index;
[x.index,x.n,x.first,num(x.buffer_bytes),num(x.dram_bytes),num(x.latency_cycles),joules(x.energy_joules),x.status].forEach(function(v,i){{var c=el('td',v,i==2||i==7?'l':'');if(i==7&&x.differs_from_optimal)c.classList.add('diff');r.appendChild(c)}});
r.addEventListener('click',function(){{open(x.index)}});tb.appendChild(r)}})}}
var order={{}};
document.querySelectorAll('#groups th').forEach(function(th){{th.addEventListener('click',function(){{var k=th.dataset.k;order[k]=!order[k];var s=order[k]?1:-1;
D.groups.sort(function(a,b){{var u=a[k],v=b[k];return(u<v?-1:u>v?1:0)*s}});fill()}})}});
fill();
var P=document.getElementById('panel');
function open(i){{var x=D.groups.filter(function(y){{return y.index==i}})[0];if(!x)return;P.textContent='';
var c=el('span','×','close');c.addEventListener('click',function(){{P.style.display='none'}});P.appendChild(c);
P.appendChild(el('h3','Group '+x.index+': '+x.n+' node'+(x.n>1?'s':'')));P.dataset.group=x.index;
var t=x.terms;if(t){{P.appendChild(el('p',(t.fits?'Fits: ':'Does not fit: ')+'F_β = '+num(t.buffer_bytes)+' bytes'+(t.fits?'':' (exceeds the buffer by '+num(t.overflow_bytes)+' bytes; smallest buffer that fits: '+num(t.smallest_buffer)+')')+'; DRAM '+num(x.dram_bytes)+' bytes.'));
var tt=el('table');var h=el('tr');['term','rows','of','row bytes','bytes','why'].forEach(function(s){{h.appendChild(el('th',s))}});tt.appendChild(h);
var w=el('tr');['weights (W)','','','',num(t.weight_bytes),'kept on chip'].forEach(function(v,i){{w.appendChild(el('td',v,i==0||i==5?'l':''))}});tt.appendChild(w);
t.tensors.forEach(function(s){{var r=el('tr');[s.tensor,num(s.resident_rows),num(s.rows),num(s.row_bytes),num(s.bytes),s.reason].forEach(function(v,i){{r.appendChild(el('td',v,i==0||i==5?'l':''))}});tt.appendChild(r)}});
P.appendChild(el('h4','Cost terms (largest first)'));P.appendChild(tt)}}
else P.appendChild(el('p','F_β = '+num(x.buffer_bytes)+' bytes; DRAM '+num(x.dram_bytes)+' bytes. Not explained: '+num(x.n)+' nodes, more than the '+num(D.max_explained)+' whose cost terms and explanation a report works out (both are quadratic in the group).','note'));
if(x.edges.length){{P.appendChild(el('h4','Edges the exact cost explainer ranks first'));var ol=el('ol');x.edges.forEach(function(e){{ol.appendChild(el('li',e.from+' → '+e.to+' ('+Number(e.score).toFixed(3)+')'))}});P.appendChild(ol)}}
if(x.timeline.length){{P.appendChild(el('h4','Buffer occupancy (LBDF simulator)'));P.appendChild(chart(x.timeline,'event','bytes',x.buffer_bytes))}}
P.appendChild(el('h4','Nodes'));var ul=el('ul');x.nodes.forEach(function(n){{ul.appendChild(el('li',n))}});P.appendChild(ul);
P.style.display='block';
document.querySelectorAll('#drawing g.node,#overview rect.grp').forEach(function(n){{n.classList.toggle('sel',n.dataset.group==String(i))}});
document.querySelectorAll('#groups tr.grp').forEach(function(r){{r.classList.toggle('sel',r.dataset.group==String(i))}});}}
window.fuselageOpen=open;
document.querySelectorAll('#drawing g.node,#overview rect.grp').forEach(function(n){{n.addEventListener('click',function(){{open(Number(n.dataset.group))}})}});
(function(){{var box=document.getElementById('drawing'),svg=box.querySelector('svg');if(!svg)return;
var W=Number(svg.getAttribute('width'))||svg.getBBox().width,H=Number(svg.getAttribute('height'))||svg.getBBox().height;
box.classList.add('zoomable');svg.removeAttribute('width');svg.removeAttribute('height');svg.setAttribute('preserveAspectRatio','xMinYMin meet');
var v={{x:0,y:0,w:W,h:H}};function set(){{svg.setAttribute('viewBox',v.x+' '+v.y+' '+v.w+' '+v.h)}}
function fit(){{var x0=Infinity,y0=Infinity,x1=-Infinity,y1=-Infinity,top=null;svg.querySelectorAll('g.node').forEach(function(n){{var b=n.getBBox();x0=Math.min(x0,b.x);x1=Math.max(x1,b.x+b.width);y1=Math.max(y1,b.y+b.height);if(b.y<y0){{y0=b.y;top=b}}}});
if(!top){{x0=0;y0=0;x1=W;y1=H;top={{x:0,y:0,width:W,height:0}}}}var cw=Math.max(1,box.clientWidth),ch=Math.max(1,box.clientHeight),m=20;
v.w=cw;v.h=ch;v.x=(x1-x0+2*m<=cw)?(x0+x1-cw)/2:top.x+top.width/2-cw/2;v.y=y0-m;set()}}
function zoom(f,cx,cy){{if(cx===undefined){{cx=v.x+v.w/2;cy=v.y+v.h/2}}v.x=cx-(cx-v.x)*f;v.y=cy-(cy-v.y)*f;v.w*=f;v.h*=f;set()}}
function at(e){{var r=box.getBoundingClientRect(),s=v.w/box.clientWidth;return[v.x+(e.clientX-r.left)*s,v.y+(e.clientY-r.top)*s]}}
box.addEventListener('wheel',function(e){{e.preventDefault();var p=at(e);zoom(e.deltaY>0?1.15:1/1.15,p[0],p[1])}},{{passive:false}});
var drag=null;box.addEventListener('mousedown',function(e){{drag=[e.clientX,e.clientY,v.x,v.y];box.style.cursor='grabbing'}});
window.addEventListener('mousemove',function(e){{if(!drag)return;var s=v.w/box.clientWidth;v.x=drag[2]-(e.clientX-drag[0])*s;v.y=drag[3]-(e.clientY-drag[1])*s;set()}});
window.addEventListener('mouseup',function(){{drag=null;box.style.cursor=''}});
box.addEventListener('keydown',function(e){{var k=e.key,s=0.1;if(k=='+'||k=='='){{zoom(1/1.25)}}else if(k=='-'||k=='_'){{zoom(1.25)}}else if(k=='0'){{fit()}}
else if(k=='ArrowLeft'){{v.x-=v.w*s;set()}}else if(k=='ArrowRight'){{v.x+=v.w*s;set()}}else if(k=='ArrowUp'){{v.y-=v.h*s;set()}}else if(k=='ArrowDown'){{v.y+=v.h*s;set()}}else return;e.preventDefault()}});
var z=el('div',null,'zoom');[['+',function(){{zoom(1/1.25)}}],['−',function(){{zoom(1.25)}}],['top',fit]].forEach(function(b){{var t=el('button',b[0]);t.addEventListener('click',function(e){{e.stopPropagation();b[1]()}});t.addEventListener('mousedown',function(e){{e.stopPropagation()}});z.appendChild(t)}});box.appendChild(z);
window.fuselageView=v;fit()}})();
function chart(pts,xl,yl,line){{var NS='http://www.w3.org/2000/svg',W=560,H=200,m=40;var s=document.createElementNS(NS,'svg');s.setAttribute('width',W);s.setAttribute('height',H);
var xs=pts.map(function(p){{return p[0]}}),ys=pts.map(function(p){{return p[1]}});var x0=Math.min.apply(null,xs),x1=Math.max.apply(null,xs),y1=Math.max.apply(null,ys.concat([line||0]))*1.05||1;
function X(v){{return m+(W-2*m)*(x1>x0?(v-x0)/(x1-x0):0.5)}}function Y(v){{return H-m+(-(H-2*m))*v/y1}}
var pl=document.createElementNS(NS,'polyline');pl.setAttribute('fill','none');pl.setAttribute('stroke','#36c');pl.setAttribute('stroke-width','1.5');
pl.setAttribute('points',pts.map(function(p){{return X(p[0])+','+Y(p[1])}}).join(' '));s.appendChild(pl);
if(line){{var l=document.createElementNS(NS,'line');l.setAttribute('x1',m);l.setAttribute('x2',W-m);l.setAttribute('y1',Y(line));l.setAttribute('y2',Y(line));l.setAttribute('stroke','#d33');l.setAttribute('stroke-dasharray','4 3');s.appendChild(l)}}
var a=document.createElementNS(NS,'path');a.setAttribute('d','M'+m+' '+(H-m)+' H'+(W-m)+' M'+m+' '+(H-m)+' V'+m);a.setAttribute('stroke','#333');s.appendChild(a);
[[xl,W/2,H-8],[yl+' (max '+Math.round(y1/1.05)+')',m,m-8]].forEach(function(q){{var tx=document.createElementNS(NS,'text');tx.textContent=q[0];tx.setAttribute('x',q[1]);tx.setAttribute('y',q[2]);tx.setAttribute('font-size','11');s.appendChild(tx)}});
return s}}
}})();
</script>
</body></html>
"#
    )
}

/// The groups to mark "≠ optimal": those the optimum does not have, unless the plan costs what
/// the optimum costs, when it is an optimum too, only grouped differently (issue 34).
fn differing_groups(
    dram: u64,
    optimal_dram: u64,
    diff: &fuselage_cost::PlanDiff,
) -> std::collections::HashSet<Vec<String>> {
    if dram <= optimal_dram {
        return std::collections::HashSet::new();
    }
    diff.only_in_a
        .iter()
        .map(|e| {
            let mut n = e.nodes.clone();
            n.sort();
            n
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuselage_cost::CostKind;

    /// A plan at the optimum's DRAM, grouped differently, is not marked "≠ optimal"; one
    /// above it is, on exactly the groups the optimum lacks.
    #[test]
    fn a_plan_that_costs_the_optimum_is_not_marked_as_differing() {
        let g = fuselage_zoo::build("resnet18").unwrap();
        let model = fuselage_cost::Lbdf::new(fuselage_cost::CostConfig::kib(128).unwrap());
        let plan_file = |plan: &fuselage_ir::Plan| PlanFile::new(&model, &g, plan).unwrap();
        let singles = plan_file(&fuselage_ir::Plan::singletons(&g));
        let mut pairs = fuselage_ir::Plan::singletons(&g);
        let (a, b) = (pairs.groups.remove(0), pairs.groups.remove(0));
        pairs.groups.insert(0, a.union(&b));
        let pairs = plan_file(&pairs);
        let diff = pairs.diff(&singles);
        assert_eq!(diff.only_in_a.len(), 1);
        assert!(differing_groups(1_000, 1_000, &diff).is_empty());
        assert!(differing_groups(999, 1_000, &diff).is_empty());
        let marked = differing_groups(1_001, 1_000, &diff);
        assert_eq!(marked.len(), 1);
        assert_eq!(marked.iter().next().unwrap().len(), 2);
    }

    /// The report's sweep is the chart of `sweep --svg`, drawn in Rust: tick labels on both
    /// axes, β marked; the page's script no longer draws it (issue 34, point 2).
    #[test]
    fn the_sweep_is_one_chart_with_tick_labels_and_beta() {
        use chart::read::{attr, texts, tick_x};
        let g = fuselage_zoo::build("resnet18").unwrap();
        let config = fuselage_cost::CostConfig::kib(128).unwrap();
        let model = Arc::new(fuselage_cost::Cached::new(CostKind::Lbdf.model(config)));
        let plan = fuselage_cost::layer_by_layer(&g);
        let html = Report::new(&g, model, &plan)
            .family(CostKind::Lbdf)
            .sweep_limit(Duration::from_secs(600))
            .render()
            .unwrap();
        let section = html.find("<div id=\"sweep\">").unwrap();
        let start = section + html[section..].find("<svg xmlns").unwrap();
        let svg = &html[start..start + html[start..].find("</svg>\n").unwrap() + 7];
        assert!(html[..start].ends_with("<h2 id=\"sweep-title\">Buffer sweep</h2>\n<div id=\"sweep\"><p>Optimal DRAM against a unified buffer from β/8 to 2β: a dot where the optimum changes, dashed lines at this plan's β and at its DRAM.</p>\n"));
        assert_eq!(
            texts(svg, "title"),
            ["resnet18: optimal DRAM against buffer (lbdf)"]
        );
        // β/8 to 2β.
        assert_eq!(
            texts(svg, "x-tick"),
            ["16 KiB", "32 KiB", "64 KiB", "128 KiB", "256 KiB"]
        );
        // 14.9 MB at 2β to the plan's 24.3 MB: steps of 2 MB.
        assert_eq!(
            texts(svg, "y-tick"),
            ["14", "16", "18", "20", "22", "24", "26"]
        );
        assert_eq!(texts(svg, "beta-label"), ["β = 128 KiB"]);
        assert_eq!(attr(svg, "beta", "x1"), tick_x(svg, "128 KiB"));
        assert_eq!(texts(svg, "plan-label"), ["this plan: 24.257 MB"]);
        // The same chart as the sweep's own, and no script draws another.
        let hw = Accelerator::beta_only(config);
        let s =
            fuselage_pipeline::sweep_within(&g, &CostKind::Lbdf, &hw, 16 << 10, 256 << 10, None)
                .unwrap();
        let dram = evaluate_plan(&fuselage_cost::Lbdf::new(config), &g, &plan)
            .unwrap()
            .dram_bytes;
        let own = chart::SweepChart::from_sweep(&s)
            .title("resnet18: optimal DRAM against buffer (lbdf)")
            .beta(128 << 10)
            .plan_dram(dram);
        assert_eq!(svg, own.to_svg());
        // Two drawings made in Rust: the plan overview and the sweep.
        assert_eq!(html.matches("<svg xmlns").count(), 2);
        assert!(!html.contains("D.sweep"));
        // Left out: its note, escaped; off: nothing.
        assert_eq!(
            sweep_section(None, "The sweep was left out: <a & b>."),
            "<h2 id=\"sweep-title\">Buffer sweep</h2>\n<div id=\"sweep\"><p>The sweep was left out: &lt;a &amp; b&gt;.</p></div>"
        );
        assert_eq!(sweep_section(None, ""), "");
        // Cut short: the note above the part drawn.
        assert_eq!(
            sweep_section(
                Some("<svg/>"),
                "The sweep stopped at its time limit (3.0 s): it covers 1 MiB to 8 MiB."
            ),
            "<h2 id=\"sweep-title\">Buffer sweep</h2>\n<div id=\"sweep\"><p>Optimal DRAM against a unified buffer from β/8 to 2β: a dot where the optimum changes, dashed lines at this plan's β and at its DRAM.</p>\n<p>The sweep stopped at its time limit (3.0 s): it covers 1 MiB to 8 MiB.</p><svg/></div>"
        );
    }

    /// The report used to embed names raw: `<!--<script>` made its script vanish (a blank
    /// heading and an empty table).
    /// A group past `MAX_EXPLAINED_NODES` used to have its cost terms and its explanation
    /// worked out like any other: on a chain of ReLUs in one group, 49.5 s at 4,096 nodes and
    /// more than two minutes at 30,000. It is left unexplained now (`"terms": null`, no
    /// edges), and its panel says so; a group at the cap is explained as before.
    #[test]
    fn a_group_past_the_cap_is_left_unexplained() {
        let chain = |n: usize| {
            let mut b = fuselage_ir::GraphBuilder::new("chain");
            let x = fuselage_ir::TensorShape::nchw(4, 8, 8);
            let mut t = b.input("x", x).unwrap();
            for i in 0..n {
                t = b
                    .node(format!("r{i}"), fuselage_ir::Op::Relu, &[t])
                    .unwrap();
            }
            b.finish().unwrap()
        };
        // A buffer at which little of the chain fits keeps the explained case quick.
        let model: Arc<dyn CostModel> = Arc::new(fuselage_cost::Lbdf::new(
            fuselage_cost::CostConfig::kib(1).unwrap(),
        ));
        for (n, explained) in [
            (MAX_EXPLAINED_NODES, true),
            (MAX_EXPLAINED_NODES + 1, false),
        ] {
            let g = chain(n);
            let plan = Plan {
                groups: vec![fuselage_ir::NodeSet::full(g.len())],
            };
            let html = Report::new(&g, model.clone(), &plan)
                .with_sweep(false)
                .optimum_limit(Duration::from_millis(200))
                .render()
                .unwrap();
            let start = html.find(r#"id="data">"#).unwrap() + r#"id="data">"#.len();
            let end = start + html[start..].find("</script>").unwrap();
            let data: Value = serde_json::from_str(&html[start..end]).unwrap();
            let group = &data["groups"][0];
            assert_eq!(group["terms"].is_object(), explained, "{n} nodes");
            assert_eq!(!group["edges"].as_array().unwrap().is_empty(), explained);
            assert_eq!(data["max_explained"], MAX_EXPLAINED_NODES);
        }
    }

    #[test]
    fn no_name_can_end_or_derail_the_embedded_data() {
        let hostile = "<!--<script></script>&amp;\u{1b}";
        let data = serde_json::json!({ "name": hostile, "nodes": [hostile, "<!--"] });
        let html = page(&data, "", "", "");
        assert!(!html.contains("<!--"), "a comment opens in the page");
        assert_eq!(
            html.matches("<script").count(),
            html.matches("</script>").count()
        );
        let start = html.find(r#"id="data">"#).unwrap() + r#"id="data">"#.len();
        let end = start + html[start..].find("</script>").unwrap();
        let back: Value = serde_json::from_str(&html[start..end]).unwrap();
        assert_eq!(back, data);
    }
}
