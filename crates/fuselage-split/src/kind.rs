//! [`SplitterKind`]: the built-in splitters by name.

fuselage_ir::kinds! {
    /// A built-in splitter.
    pub enum SplitterKind: "splitter" {
        /// [`RandomSplitter`](crate::RandomSplitter): random cuts until every part fits (the
        /// paper's baseline).
        Random = "random",
        /// [`ExplainedSplitter`](crate::ExplainedSplitter): Algorithm 1, cutting where an explainer says the
        /// group breaks β, falling back to random cuts where that fails.
        Get = "get",
    }
}
