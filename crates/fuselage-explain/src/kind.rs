//! [`ExplainerKind`]: the built-in explainers by name.

fuselage_ir::kinds! {
    /// A built-in explainer. The learned ones (`gnne`, `pg`, `rg`) need the `learned` feature
    /// and a classifier; `cost` needs a cost model; `random` needs nothing.
    pub enum ExplainerKind: "explainer" {
        /// GNNExplainer over the GNN classifier: a soft edge mask optimised per group.
        Gnne = "gnne",
        /// PGExplainer over the GNN classifier: an edge MLP trained across groups.
        Pg = "pg",
        /// RG-Explainer over the GNN classifier: a seed and a policy that grows a subgraph.
        Rg = "rg",
        /// The exact cost model: how much the buffer requirement falls when an edge is cut.
        Cost = "cost",
        /// Random edge scores, the floor any explainer must beat.
        Random = "random",
    }
}

impl ExplainerKind {
    /// Whether it reads the GNN classifier (and so needs the `learned` feature).
    pub fn is_learned(self) -> bool {
        matches!(
            self,
            ExplainerKind::Gnne | ExplainerKind::Pg | ExplainerKind::Rg
        )
    }
}
