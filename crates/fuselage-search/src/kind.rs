//! [`SearchKind`]: the built-in strategies by name.

use crate::{LocalSearch, Nsga2, Optimal, RandomSearch, SearchStrategy};

fuselage_ir::kinds! {
    /// A built-in search strategy, with its default settings.
    ///
    /// ```
    /// use fuselage_search::SearchKind;
    /// let kind: SearchKind = "ls".parse()?;
    /// assert_eq!(kind, SearchKind::Local);
    /// assert_eq!(kind.strategy().name(), "local");
    /// assert_eq!(kind.table_name(), "LS");
    /// # Ok::<(), fuselage_ir::UnknownKind>(())
    /// ```
    pub enum SearchKind: "search" {
        /// [`RandomSearch`]: a fresh random plan per evaluation (RS).
        Random = "random" | "rs",
        /// [`LocalSearch`]: a population of 10, one-edit mutations (LS).
        Local = "local" | "ls",
        /// [`Nsga2`]: NSGA-II on the problem's pair (DRAM and MBU by default), population 10.
        Nsga2 = "nsga2" | "nsga-ii",
        /// [`Optimal`]: the exact programme over contiguous plans (needs no budget).
        Optimal = "optimal",
    }
}

impl SearchKind {
    /// The strategy with its default settings.
    pub fn strategy(self) -> Box<dyn SearchStrategy> {
        match self {
            SearchKind::Random => Box::new(RandomSearch::default()),
            SearchKind::Local => Box::new(LocalSearch::default()),
            SearchKind::Nsga2 => Box::new(Nsga2::default()),
            SearchKind::Optimal => Box::new(Optimal::default()),
        }
    }

    /// The name the paper's tables use: `RS`, `LS`, `NSGA-II`, `Optimal`.
    pub fn table_name(self) -> &'static str {
        match self {
            SearchKind::Random => "RS",
            SearchKind::Local => "LS",
            SearchKind::Nsga2 => "NSGA-II",
            SearchKind::Optimal => "Optimal",
        }
    }
}
