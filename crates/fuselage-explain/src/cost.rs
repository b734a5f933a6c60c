//! [`CostExplainer`]: explanations read off the exact cost model.

use crate::error::Result;
use crate::explainer::Explainer;
use crate::explanation::{Explanation, Selection, group_edges};
use fuselage_cost::CostModel;
use fuselage_ir::sample::components;
use fuselage_ir::{Graph, NodeSet};
use rand_chacha::ChaCha8Rng;

/// Ranks each edge by how much the exact buffer requirement falls when the group is cut there.
///
/// Cutting an edge `u → v` means a head/tail cut of the group's id order that severs it (with
/// the skips that enclose it, see [`fuselage_ir::order`]); the requirement after a cut is the
/// largest `F_β` of the resulting connected parts. An edge's score is the best relative fall
/// over its cuts, `(F_β(group) − max_part F_β(part)) / F_β(group)`, in [0, 1]. A node's score is
/// its share of the group's requirement when the model itemises it
/// ([`CostModel::breakdown`]), else the best score of its edges.
///
/// No published explainer does this: it needs the cost model, which the learned explainers
/// only imitate through the classifier. It shows what they are worth.
///
/// It holds no cost model: it explains with the one each call hands it, the model the group is
/// judged by ([`Explainer`]'s "one carrier for β"), so it judges at that model's β and element
/// sizes, and shares its answers where the model is [`Cached`](fuselage_cost::Cached) (a
/// splitter's, a search's).
///
/// Complexity: one cost-model call per part of each of the group's n − 1 cuts, O(n) calls.
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, Lbdf};
/// use fuselage_explain::{CostExplainer, Explainer};
/// use fuselage_ir::NodeSet;
/// use rand::SeedableRng;
/// let g = fuselage_zoo::build("vgg16").unwrap();
/// let group = NodeSet::from_ids(g.len(), g.node_ids().take(12));
/// let model = Lbdf::new(CostConfig::kib(128)?);
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
/// let e = CostExplainer::new().explain(&g, &group, &model, &mut rng)?;
/// assert!(e.edge_scores.iter().all(|s| (0.0..=1.0).contains(s)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct CostExplainer {
    selection: Selection,
}

impl CostExplainer {
    /// An explainer selecting edges by the default [`Selection`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Selects edges by `selection`.
    pub fn with_selection(mut self, selection: Selection) -> Self {
        self.selection = selection;
        self
    }
}

/// The largest buffer requirement under `model` of the connected parts of `set`.
fn worst_part(model: &dyn CostModel, g: &Graph, set: &NodeSet) -> Result<u64> {
    let mut worst = 0;
    for part in components(g, set) {
        worst = worst.max(model.evaluate(g, &part)?.buffer_bytes);
    }
    Ok(worst)
}

impl Explainer for CostExplainer {
    fn name(&self) -> &str {
        "cost"
    }

    fn explain(
        &self,
        g: &Graph,
        group: &NodeSet,
        model: &dyn CostModel,
        _rng: &mut ChaCha8Rng,
    ) -> Result<Explanation> {
        let (order, edges) = group_edges(g, group)?;
        let whole = model.evaluate(g, group)?;
        let total = whole.buffer_bytes.max(1) as f64;
        // fall[k]: relative fall of the cut after k nodes (k = 1..n-1).
        let n = order.len();
        let mut fall = vec![0.0f32; n];
        for (k, f) in fall.iter_mut().enumerate().take(n).skip(1) {
            let (head, tail) = order.cut(k);
            let after = worst_part(model, g, &head)?.max(worst_part(model, g, &tail)?);
            *f = ((total - after as f64) / total).max(0.0) as f32;
        }
        let scores: Vec<f32> = edges
            .iter()
            .map(|&(u, v)| order.cuts_of(u, v).map(|k| fall[k]).fold(0.0f32, f32::max))
            .collect();
        let node_scores = match model.breakdown(g, group)? {
            Some(items) => {
                let mut s = vec![0.0f32; n];
                for t in items {
                    let node = g.require(&t.tensor).ok();
                    if let Some(i) = node.and_then(|v| order.position(v)) {
                        s[i] += (t.bytes as f64 / total) as f32;
                    }
                }
                Some(s)
            }
            None => None,
        };
        Explanation::from_scores(
            self.name(),
            &order,
            edges,
            scores,
            node_scores,
            &self.selection,
        )
    }
}
