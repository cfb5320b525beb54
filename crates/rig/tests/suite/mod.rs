mod agent_loop;
mod fake_model;
mod rig;
