//! Shared by the plan tests: a statement planned and optimized from query text, with no
//! statistics and no query threads.

use plexus_plan::logical::{ProcedureRegistry, QueryPlan};
use plexus_plan::optimizer::{self, OptimizerContext};
use plexus_plan::{ParallelConfig, Params, plan_statement};

/// `query` parsed, planned and run through every optimizer pass.
pub fn optimized(query: &str) -> QueryPlan {
    let statement = plexus_cypher::parse(query).expect("parses");
    let procedures = ProcedureRegistry::new();
    let mut plan =
        plan_statement(&statement, query, &Params::new(), &procedures, None).expect("plans");
    let parallel = ParallelConfig::serial();
    let ctx = OptimizerContext {
        stats: None,
        parallel: &parallel,
    };
    optimizer::optimize(&mut plan, &ctx, None);
    plan
}
