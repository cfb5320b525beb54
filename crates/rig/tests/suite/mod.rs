mod agent_loop;
mod example;
mod fake_model;
mod rig;
