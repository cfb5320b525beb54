mod catalog;
mod decode;
mod definition;
mod differential;
mod fan_out;
mod normalise;
mod outcome;
mod properties;
