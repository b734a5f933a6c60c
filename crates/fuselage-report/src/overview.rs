//! The plan overview: the graph of groups at a glance, on any network size.
//!
//! The node drawing (layout-rs) stops at a few hundred nodes, and even below that a reader
//! must scroll to find where the traffic goes. The overview draws *groups*, not nodes, so it
//! stays one screen high on Llama-3.2-1B's 968 nodes:
//!
//! - **One row per repeated block.** A network exported from PyTorch names its nodes by
//!   module path, and a repeated block carries its index: `/model/layers.3/…`,
//!   `/m/h.0/…`, `/layer4/layer4.1/…`, `/features/features.9/…`. A group's row is the
//!   path up to the first such `name.N` segment of its first node ([`block_of`]); a group
//!   whose first node has none (a head after the last block) joins the row before it, or
//!   before the first block (an embedding, a stem) a row of its own, `start`. A
//!   network without indexed names (Inception's `Mixed_5c`) gets a row per top-level
//!   module. Rows keep the order in which their blocks first appear, so the transformer's
//!   layers stack up top to bottom and line up column by column.
//! - **A segment per group, as wide as its DRAM.** Widths share one scale across rows, so a
//!   row's length is its layer's traffic and a wide segment is where the traffic goes;
//!   every group keeps a few pixels, so that each can be clicked.
//! - **Coloured by its fill of β**: pale where the group uses little of the buffer, dark
//!   blue where it is full, red where it does not fit, grey for an unfusable node.
//!
//! Each segment carries `data-group` (the page's script opens that group's panel on a click)
//! and a `<title>` with its numbers. The SVG is plain text built here, so the report stays
//! one offline file and the drawing costs nothing at any size.

use crate::markup;
use std::collections::HashMap;
use std::fmt::Write as _;

/// What the overview draws of one group.
#[derive(Clone, Debug)]
pub struct GroupBox<'a> {
    /// The group's index in the plan.
    pub index: usize,
    /// The name of its first node (in node order).
    pub first: &'a str,
    /// Its first node's index (groups are drawn in this order).
    pub order: usize,
    /// Nodes in the group.
    pub nodes: usize,
    /// Its DRAM traffic, bytes.
    pub dram_bytes: u64,
    /// Its on-chip need, bytes.
    pub buffer_bytes: u64,
    /// Whether it fits the buffer.
    pub valid: bool,
    /// Whether it is an unfusable node on its own.
    pub unfusable: bool,
}

/// Width of the drawing, and of the row labels on its left, in pixels.
const WIDTH: f64 = 1200.0;
const LABEL: f64 = 150.0;
/// Height of a row, and the least width of a group's segment, in pixels.
const ROW: f64 = 22.0;
const MIN_SEGMENT: f64 = 3.0;

/// The repeated block a node belongs to: its name's path up to the first segment of the form
/// `name.N` (`/model/layers.3/self_attn/MatMul` → `/model/layers.3`), or `None`.
pub fn block_of(name: &str) -> Option<&str> {
    let mut end = 0;
    for seg in name.split('/') {
        let here = end + seg.len();
        let indexed = seg.rsplit_once('.').is_some_and(|(head, n)| {
            !head.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        });
        if indexed {
            return Some(&name[..here]);
        }
        end = here + 1;
    }
    None
}

/// The top-level module of a node (`/Mixed_5c/branch1x1/conv/Conv` → `/Mixed_5c`); the name
/// itself when it has no path.
fn module_of(name: &str) -> &str {
    let rest = name.strip_prefix('/').unwrap_or(name);
    match rest.find('/') {
        Some(i) => &name[..name.len() - rest.len() + i],
        None => name,
    }
}

/// The overview as an SVG element, of groups over a buffer of `beta` bytes.
pub fn overview(groups: &[GroupBox<'_>], beta: u64) -> String {
    let mut order: Vec<&GroupBox<'_>> = groups.iter().collect();
    order.sort_by_key(|b| (b.order, b.index));
    let indexed = order.iter().any(|b| block_of(b.first).is_some());
    // Rows in order of first appearance; a group with no block joins the row before it.
    let mut rows: Vec<(String, Vec<&GroupBox<'_>>)> = Vec::new();
    let mut row_of: HashMap<&str, usize> = HashMap::new();
    for b in order {
        let key = if indexed {
            block_of(b.first)
        } else {
            Some(module_of(b.first))
        };
        let r = match key {
            Some(k) => *row_of.entry(k).or_insert_with(|| {
                rows.push((k.to_string(), Vec::new()));
                rows.len() - 1
            }),
            None if rows.is_empty() => {
                rows.push((String::new(), Vec::new()));
                0
            }
            None => rows.len() - 1,
        };
        rows[r].1.push(b);
    }
    let longest = rows
        .iter()
        .map(|(_, r)| r.iter().map(|b| b.dram_bytes).sum::<u64>())
        .max()
        .unwrap_or(0)
        .max(1);
    let scale = (WIDTH - LABEL) / longest as f64;
    let total: u64 = groups.iter().map(|b| b.dram_bytes).sum::<u64>().max(1);
    let mut body = String::new();
    let mut right: f64 = WIDTH;
    for (r, (key, row)) in rows.iter().enumerate() {
        let y = r as f64 * ROW;
        let label = key.rsplit('/').find(|s| !s.is_empty()).unwrap_or("start");
        let _ = write!(
            body,
            r#"<text class="row" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LABEL - 6.0,
            y + ROW * 0.68,
            markup::text(label)
        );
        let mut x = LABEL;
        for b in row {
            let w = (b.dram_bytes as f64 * scale).max(MIN_SEGMENT);
            let fill = b.buffer_bytes as f64 / beta.max(1) as f64;
            let colour = if b.unfusable {
                "#b8b8b8".to_string()
            } else if !b.valid {
                "#e05545".to_string()
            } else {
                // Pale (little of β used) to dark blue (full).
                let light = 88.0 - 50.0 * fill.clamp(0.0, 1.0);
                format!("hsl(212,65%,{light:.0}%)")
            };
            let _ = write!(
                body,
                r#"<rect class="grp" data-group="{}" x="{x:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{colour}"><title>group {}: {} node{}, from {} · DRAM {} B ({:.1}% of the plan) · F_β {} B ({:.0}% of β){}</title></rect>"#,
                b.index,
                y + 2.0,
                ROW - 4.0,
                b.index,
                b.nodes,
                if b.nodes == 1 { "" } else { "s" },
                markup::text(b.first),
                b.dram_bytes,
                100.0 * b.dram_bytes as f64 / total as f64,
                b.buffer_bytes,
                100.0 * fill,
                if b.unfusable {
                    " · unfusable"
                } else if b.valid {
                    ""
                } else {
                    " · does not fit"
                },
            );
            x += w;
        }
        right = right.max(x);
    }
    let height = (rows.len() as f64 * ROW).max(ROW);
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" id="overview-svg" viewBox="0 0 {right:.0} {height:.0}" width="{right:.0}" height="{height:.0}" font-family="system-ui,sans-serif" font-size="11"><style>rect.grp{{stroke:#fff;stroke-width:1;cursor:pointer}} rect.grp.sel{{stroke:#d33;stroke-width:2}}</style>{body}</svg>"##
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_the_path_to_the_first_indexed_segment() {
        assert_eq!(
            block_of("/model/layers.3/self_attn/MatMul"),
            Some("/model/layers.3")
        );
        assert_eq!(block_of("/m/h.0/attn/c_attn/Gemm"), Some("/m/h.0"));
        assert_eq!(
            block_of("/layer4/layer4.1/conv2/Conv"),
            Some("/layer4/layer4.1")
        );
        assert_eq!(
            block_of("/features/features.9/conv/conv.0/conv.0.0/Conv"),
            Some("/features/features.9")
        );
        assert_eq!(block_of("/conv1/Conv"), None);
        assert_eq!(block_of("/Mixed_5c/branch_pool/Relu"), None);
        assert_eq!(block_of("x.1"), Some("x.1"));
        assert_eq!(block_of("/a/.1/b"), None);
        assert_eq!(module_of("/Mixed_5c/branch_pool/Relu"), "/Mixed_5c");
        assert_eq!(module_of("relu"), "relu");
    }

    fn group(index: usize, first: &'static str, dram: u64, buffer: u64) -> GroupBox<'static> {
        GroupBox {
            index,
            first,
            order: index,
            nodes: 2,
            dram_bytes: dram,
            buffer_bytes: buffer,
            valid: buffer < 100,
            unfusable: false,
        }
    }

    /// Two layers make two rows after the stem's, widths follow DRAM on one scale, and a
    /// group that does not fit is red.
    #[test]
    fn rows_are_blocks_and_widths_are_dram() {
        let groups = [
            group(0, "/embed/Gather", 100, 10),
            group(1, "/layers.0/attn/MatMul", 900, 50),
            group(2, "/layers.0/mlp/Gemm", 50, 150),
            group(3, "/layers.1/attn/MatMul", 1_050, 99),
        ];
        let svg = overview(&groups, 100);
        let rects: Vec<&str> = svg.split("<rect ").skip(1).collect();
        assert_eq!(rects.len(), 4);
        let attr = |r: &str, k: &str| -> f64 {
            let at = r.find(&format!(" {k}=\"")).unwrap() + k.len() + 3;
            r[at..at + r[at..].find('"').unwrap()].parse().unwrap()
        };
        // Rows: the stem (group 0), layers.0 (groups 1 and 2, 950 bytes), layers.1 (group
        // 3, 1,050 bytes). One scale: 1,050 bytes over the 1,050 pixels beside the labels.
        assert_eq!(
            rects.iter().map(|r| attr(r, "y")).collect::<Vec<_>>(),
            [2.0, 24.0, 24.0, 46.0]
        );
        assert_eq!(
            rects.iter().map(|r| attr(r, "width")).collect::<Vec<_>>(),
            [100.0, 900.0, 50.0, 1050.0]
        );
        assert_eq!(attr(rects[2], "x"), 1_050.0);
        assert!(rects[2].contains("fill=\"#e05545\""), "{}", rects[2]);
        assert!(rects[3].contains("data-group=\"3\""));
        for label in [">start</text>", ">layers.0</text>", ">layers.1</text>"] {
            assert!(svg.contains(label), "{label}");
        }
    }

    #[test]
    fn names_are_escaped_and_empty_plans_draw() {
        let g = [group(0, "/<b>&\u{1b}/x.1/y", 0, 0)];
        let svg = overview(&g, 0);
        assert!(
            !svg.contains("<b>") && svg.contains("&lt;b&gt;&amp;"),
            "{svg}"
        );
        assert!(!svg.contains('\u{1b}'));
        assert!(overview(&[], 1).starts_with("<svg"));
    }
}
