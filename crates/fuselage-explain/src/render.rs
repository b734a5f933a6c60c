//! Drawing an explanation: the group with its edges weighted by importance, as Graphviz DOT or
//! as an SVG picture (plotters; no Graphviz needed).
//!
//! Both draw every node of the group with its ONNX name and op, and every internal edge with a
//! width and a colour (grey to red) that grow with its score's *rank* ([`normalised`]), so
//! that close scores still separate; the selected edges carry their rank, edges end in an
//! arrowhead, and long names keep both ends ([`short_name`]). The SVG (feature `plot`) lays
//! the group out top to bottom by depth (longest path from the group's entry nodes), one row
//! per depth.

#[cfg(feature = "plot")]
use crate::error::{ExplainError, Result};
use crate::explanation::Explanation;
use fuselage_ir::Graph;
use std::fmt::Write as _;
#[cfg(feature = "plot")]
use std::path::Path;

/// Scores as rank positions in [0, 1] (the lowest 0, the highest 1, ties sharing their mean
/// rank), so that scores packed close together — GNNExplainer's often differ in the fourth
/// decimal — still draw apart. All 0 when no edge scores above 0; a lone positive edge is 1.
pub fn normalised(e: &Explanation) -> Vec<f64> {
    let scores: Vec<f64> = e.edge_scores.iter().map(|&s| f64::from(s)).collect();
    if !scores.iter().any(|&s| s > 0.0) {
        return vec![0.0; scores.len()];
    }
    if scores.len() == 1 {
        return vec![1.0];
    }
    let top = (scores.len() - 1) as f64;
    crate::terms::ranks(&scores)
        .into_iter()
        .map(|r| (r - 1.0) / top)
        .collect()
}

/// A node name short enough for a box: the first and last parts kept, the middle elided
/// (`/layer2/…/downsample.0/Conv`), so that names differing at either end stay apart.
pub fn short_name(name: &str, max: usize) -> String {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= max {
        return name.to_string();
    }
    let head = max / 3;
    let tail = max - head - 1;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

fn rank_of(e: &Explanation) -> Vec<Option<usize>> {
    let mut r = vec![None; e.edges.len()];
    for (rank, &i) in e.selected.iter().enumerate() {
        r[i] = Some(rank + 1);
    }
    r
}

/// Grey (0) to red (1).
fn colour(t: f64) -> (u8, u8, u8) {
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    (lerp(170.0, 215.0), lerp(170.0, 25.0), lerp(170.0, 30.0))
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The explanation as a Graphviz digraph: edge `penwidth` 1 to 7 and colour by score, the
/// selected edges labelled `#rank score`.
pub fn to_dot(g: &Graph, e: &Explanation) -> String {
    let norm = normalised(e);
    let ranks = rank_of(e);
    let mut out = format!(
        "digraph \"{}\" {{\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n",
        escape(&format!("{} ({})", g.name(), e.explainer))
    );
    for (i, &v) in e.nodes.iter().enumerate() {
        let n = g.node(v);
        let _ = writeln!(
            out,
            "  n{} [label=\"{}\\n{} {:.2}\"];",
            v.index(),
            escape(&n.name),
            n.op.kind().name(),
            e.node_scores[i]
        );
    }
    for (i, &(u, v)) in e.edges.iter().enumerate() {
        let (r, gr, b) = colour(norm[i]);
        let label = ranks[i].map_or(String::new(), |k| {
            format!(", label=\"#{k} {:.3}\"", e.edge_scores[i])
        });
        let _ = writeln!(
            out,
            "  n{} -> n{} [penwidth={:.2}, color=\"#{r:02x}{gr:02x}{b:02x}\"{label}];",
            u.index(),
            v.index(),
            1.0 + 6.0 * norm[i],
        );
    }
    out.push_str("}\n");
    out
}

/// Where [`to_svg`] puts things: a box per node of the group, and per edge a polyline that
/// runs only through the gaps between rows and a lane beside the drawing, so no edge crosses
/// a box it does not join.
#[cfg(any(feature = "plot", test))]
#[derive(Clone, Debug)]
struct Layout {
    size: (u32, u32),
    /// Per node of `e.nodes`: the box's top-left and bottom-right corners.
    boxes: Vec<((i32, i32), (i32, i32))>,
    /// Per edge of `e.edges` (`None` when an end is outside the group): its polyline, from the
    /// source box's bottom to the target box's top.
    edges: Vec<Option<Vec<(i32, i32)>>>,
}

#[cfg(any(feature = "plot", test))]
const CELL_W: i32 = 230;
#[cfg(any(feature = "plot", test))]
const CELL_H: i32 = 64;
/// Half a box's height; boxes are `CELL_W − 16` wide.
#[cfg(any(feature = "plot", test))]
const HALF_H: i32 = 16;

/// Lays out the group by depth (longest path from its entry nodes; ids are topological):
/// one row per depth, centred. An edge between neighbouring rows drops into the gap below its
/// source, runs across to above its target and drops in; an edge that skips rows runs across
/// the gap below its source to a lane right of every box, down the lane, and across the gap
/// above its target. Each such edge has its own lane.
#[cfg(any(feature = "plot", test))]
fn layout(e: &Explanation) -> Layout {
    let pos = |v: fuselage_ir::NodeId| e.nodes.binary_search(&v).ok();
    let mut depth = vec![0usize; e.nodes.len()];
    for &(u, v) in &e.edges {
        if let (Some(a), Some(b)) = (pos(u), pos(v)) {
            depth[b] = depth[b].max(depth[a] + 1);
        }
    }
    let rows = depth.iter().max().map_or(1, |d| d + 1);
    let mut slot = vec![0usize; e.nodes.len()];
    let mut per_row = vec![0usize; rows];
    for (i, &d) in depth.iter().enumerate() {
        slot[i] = per_row[d];
        per_row[d] += 1;
    }
    let cols = per_row.iter().copied().max().unwrap_or(1);
    let centre = |i: usize| {
        let d = depth[i];
        let offset = (cols - per_row[d]) as i32 * CELL_W / 2;
        (
            20 + offset + slot[i] as i32 * CELL_W + CELL_W / 2,
            50 + d as i32 * CELL_H + CELL_H / 2,
        )
    };
    let boxes = (0..e.nodes.len())
        .map(|i| {
            let (x, y) = centre(i);
            (
                (x - CELL_W / 2 + 8, y - HALF_H),
                (x + CELL_W / 2 - 8, y + HALF_H),
            )
        })
        .collect();
    let right = 20 + cols as i32 * CELL_W;
    let mut lanes = 0i32;
    let edges = e
        .edges
        .iter()
        .enumerate()
        .map(|(k, &(u, v))| {
            let (a, b) = (pos(u)?, pos(v)?);
            let (p, q) = (centre(a), centre(b));
            // Spread the horizontal runs a little inside the gaps (each gap is 32 px tall).
            let jitter = (k % 5) as i32 * 3 - 6;
            let below = p.1 + CELL_H / 2 + jitter;
            let above = q.1 - CELL_H / 2 + jitter;
            let start = (p.0, p.1 + HALF_H);
            let end = (q.0, q.1 - HALF_H);
            Some(if depth[b] == depth[a] + 1 {
                vec![start, (p.0, below), (q.0, below), end]
            } else {
                lanes += 1;
                let lane = right + 8 * lanes;
                vec![
                    start,
                    (p.0, below),
                    (lane, below),
                    (lane, above),
                    (q.0, above),
                    end,
                ]
            })
        })
        .collect();
    Layout {
        size: (
            (right + 8 * lanes + 20) as u32,
            (rows as i32 * CELL_H + 60) as u32,
        ),
        boxes,
        edges,
    }
}

/// Draws the explanation as an SVG file at `path`: the group's nodes in rows by depth, each
/// edge routed around the boxes (see [`layout`]) with an arrowhead, wider and redder the more
/// responsible it is, and the top ranks numbered.
///
/// Feature `plot` (plotters).
///
/// # Errors
/// [`ExplainError::Config`] when the file cannot be written.
#[cfg(feature = "plot")]
pub fn to_svg(g: &Graph, e: &Explanation, path: impl AsRef<Path>) -> Result<()> {
    use plotters::prelude::*;
    let perr = |x: &dyn std::fmt::Display| {
        ExplainError::Config(format!("drawing {}: {x}", path.as_ref().display()))
    };
    let at = layout(e);
    let root = SVGBackend::new(path.as_ref(), at.size).into_drawing_area();
    root.fill(&WHITE).map_err(|x| perr(&x))?;
    let title = format!(
        "{} · {} explainer · {} nodes, {} edges (red, wide: more responsible)",
        g.name(),
        e.explainer,
        e.nodes.len(),
        e.edges.len()
    );
    root.draw(&Text::new(title, (20, 15), ("sans-serif", 16).into_font()))
        .map_err(|x| perr(&x))?;
    let norm = normalised(e);
    let ranks = rank_of(e);
    let mut by_score: Vec<usize> = (0..e.edges.len()).collect();
    by_score.sort_by(|&a, &b| norm[a].total_cmp(&norm[b]));
    for i in by_score {
        let Some(line) = &at.edges[i] else {
            continue;
        };
        let (r, gr, bl) = colour(norm[i]);
        let style = ShapeStyle {
            color: RGBColor(r, gr, bl).to_rgba(),
            filled: false,
            stroke_width: (1.0 + 6.0 * norm[i]).round() as u32,
        };
        root.draw(&PathElement::new(line.clone(), style))
            .map_err(|x| perr(&x))?;
        // The last segment drops onto the target box: the arrowhead points down.
        let q = line[line.len() - 1];
        root.draw(&Polygon::new(
            vec![q, (q.0 - 5, q.1 - 9), (q.0 + 5, q.1 - 9)],
            RGBColor(r, gr, bl).filled(),
        ))
        .map_err(|x| perr(&x))?;
        if let Some(k) = ranks[i] {
            let (m0, m1) = (line[line.len() / 2 - 1], line[line.len() / 2]);
            let mid = ((m0.0 + m1.0) / 2 + 4, (m0.1 + m1.1) / 2 - 2);
            root.draw(&Text::new(
                format!("#{k}"),
                mid,
                ("sans-serif", 12).into_font().color(&RED),
            ))
            .map_err(|x| perr(&x))?;
        }
    }
    for (i, &v) in e.nodes.iter().enumerate() {
        let (tl, br) = at.boxes[i];
        let n = g.node(v);
        let short = short_name(&n.name, 34);
        root.draw(&Rectangle::new(
            [tl, br],
            ShapeStyle {
                color: RGBColor(235, 240, 250).to_rgba(),
                filled: true,
                stroke_width: 1,
            },
        ))
        .map_err(|x| perr(&x))?;
        root.draw(&Text::new(
            short,
            (tl.0 + 4, tl.1 + 4),
            ("sans-serif", 11).into_font(),
        ))
        .map_err(|x| perr(&x))?;
        root.draw(&Text::new(
            format!("{} · {:.2}", n.op.kind().name(), e.node_scores[i]),
            (tl.0 + 4, tl.1 + 18),
            ("sans-serif", 11).into_font(),
        ))
        .map_err(|x| perr(&x))?;
    }
    root.present().map_err(|x| perr(&x))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuselage_ir::{ConvAttrs, GraphBuilder, NodeSet, Op, TensorShape};

    fn explanation(scores: Vec<f32>) -> (Graph, Explanation) {
        let mut b = GraphBuilder::new("chain");
        let mut x = b.input("input", TensorShape::nchw(4, 8, 8)).unwrap();
        for i in 0..=scores.len() {
            x = b
                .node(
                    format!("/layer{i}/layer{i}.0/downsample/downsample.0/Conv"),
                    Op::Conv(ConvAttrs::square(4, 1, 1, 1, 1)),
                    &[x],
                )
                .unwrap();
        }
        let g = b.finish().unwrap();
        let e = whole_graph(&g, |_| scores);
        (g, e)
    }

    /// An explanation of the whole graph as one group, with the scores `scores(edges)` gives.
    fn whole_graph(g: &Graph, scores: impl FnOnce(usize) -> Vec<f32>) -> Explanation {
        let group = NodeSet::full(g.len());
        let (order, edges) = crate::explanation::group_edges(g, &group).unwrap();
        let scores = scores(edges.len());
        Explanation::from_scores(
            "gnne",
            &order,
            edges,
            scores,
            None,
            &crate::Selection::default(),
        )
        .unwrap()
    }

    /// GNNExplainer's scores on a ResNet group lay within 0.9977 to 0.9982, and every edge
    /// was drawn alike: ranks pull them apart.
    #[test]
    fn close_scores_still_separate() {
        let (_, e) = explanation(vec![0.9980, 0.9977, 0.9982]);
        assert_eq!(normalised(&e), vec![0.5, 0.0, 1.0]);
    }

    /// Names were cut from the front, so two layers' downsample convolutions read the same.
    #[test]
    fn short_names_keep_both_ends() {
        let a = short_name("/layer1/layer1.0/downsample/downsample.0/Conv", 34);
        let b = short_name("/layer2/layer2.0/downsample/downsample.0/Conv", 34);
        assert_ne!(a, b);
        assert!(
            a.starts_with("/layer1/") && a.ends_with("downsample.0/Conv"),
            "{a}"
        );
        assert_eq!(a.chars().count(), 34);
        assert_eq!(short_name("/conv1/Conv", 34), "/conv1/Conv");
    }

    /// No edge had an arrowhead.
    #[cfg(feature = "plot")]
    #[test]
    fn every_edge_has_an_arrowhead() {
        let (g, e) = explanation(vec![0.2, 0.5, 0.9]);
        let path = std::env::temp_dir().join(format!("fuselage-render-{}.svg", std::process::id()));
        to_svg(&g, &e, &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).ok();
        assert_eq!(svg.matches("<polygon").count(), e.edges.len());
        assert!(svg.contains("/layer1/"), "labels keep their front");
    }

    /// Skip edges ran straight through the boxes between their ends. On a residual block
    /// (a skip over three nodes) no segment of any edge enters a box other than its own two.
    #[test]
    fn edges_route_around_the_boxes() {
        let mut b = GraphBuilder::new("residual");
        let x = b.input("input", TensorShape::nchw(4, 8, 8)).unwrap();
        let conv = |i: usize| {
            (
                format!("/c{i}/Conv"),
                Op::Conv(ConvAttrs::square(4, 3, 1, 1, 1)),
            )
        };
        let (n0, op0) = conv(0);
        let a = b.node(n0, op0, &[x]).unwrap();
        let (n1, op1) = conv(1);
        let c1 = b.node(n1, op1, &[a]).unwrap();
        let r = b.node("/r/Relu", Op::Relu, &[c1]).unwrap();
        let (n2, op2) = conv(2);
        let c2 = b.node(n2, op2, &[r]).unwrap();
        let (n3, op3) = conv(3);
        let side = b.node(n3, op3, &[a]).unwrap();
        let add = b.node("/add/Add", Op::Add, &[c2, a]).unwrap();
        b.node("/out/Add", Op::Add, &[add, side]).unwrap();
        let g = b.finish().unwrap();
        let e = whole_graph(&g, |n| (0..n).map(|i| i as f32).collect());
        let at = layout(&e);
        let pos = |v| e.nodes.binary_search(&v).unwrap();
        let mut skips = 0;
        for (k, &(u, v)) in e.edges.iter().enumerate() {
            let line = at.edges[k].as_ref().unwrap();
            skips += usize::from(line.len() > 4);
            let ends = [pos(u), pos(v)];
            // Every point of every segment, one pixel apart.
            for w in line.windows(2) {
                let (p, q) = (w[0], w[1]);
                assert!(
                    p.0 == q.0 || p.1 == q.1,
                    "segments are horizontal or vertical"
                );
                let steps = (q.0 - p.0).abs().max((q.1 - p.1).abs()).max(1);
                for t in 0..=steps {
                    let x = p.0 + (q.0 - p.0) * t / steps;
                    let y = p.1 + (q.1 - p.1) * t / steps;
                    for (i, &(tl, br)) in at.boxes.iter().enumerate() {
                        let inside = x > tl.0 && x < br.0 && y > tl.1 && y < br.1;
                        assert!(
                            !inside || ends.contains(&i),
                            "edge {k} crosses the box of {}",
                            g.node(e.nodes[i]).name
                        );
                    }
                }
            }
            // It leaves its source at the bottom and reaches its target at the top.
            assert_eq!(line[0].1, at.boxes[ends[0]].1.1);
            assert_eq!(line[line.len() - 1].1, at.boxes[ends[1]].0.1);
        }
        assert!(skips >= 2, "the skip edges take a lane");
        assert!(at.size.0 as i32 > at.boxes.iter().map(|b| b.1.0).max().unwrap());
    }
}
