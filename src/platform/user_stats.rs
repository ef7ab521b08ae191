//! Numbers a client sends the monitor beside LibAFL's own (queue cycles, learned tokens,
//! unstable edges): one LibAFL user statistic each, the largest over the clients shown.

use std::{borrow::Cow, marker::PhantomData};

use libafl::{
    events::{Event, EventFirer, EventWithStats},
    inputs::BytesInput,
    monitors::stats::{AggregatorOps, UserStats, UserStatsValue},
    state::HasExecutions,
    Error,
};

/// Sends `value` under `name`.
pub fn report_number<EM, S>(
    state: &mut S,
    manager: &mut EM,
    name: &'static str,
    value: u64,
) -> Result<(), Error>
where
    S: HasExecutions,
    EM: EventFirer<BytesInput, S>,
{
    let executions = *state.executions();
    manager.fire(
        state,
        EventWithStats::with_current_time(
            Event::UpdateUserStats {
                name: Cow::Borrowed(name),
                value: UserStats::new(UserStatsValue::Number(value), AggregatorOps::Max),
                phantom: PhantomData,
            },
            executions,
        ),
    )
}
