#[cfg(feature = "agent-loop")]
mod agent_loop;
mod calls;
#[cfg(feature = "agent-loop")]
mod example;
mod fake_model;
mod rig;
