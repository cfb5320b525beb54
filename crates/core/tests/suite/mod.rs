mod decode;
mod definition;
mod fan_out;
mod normalise;
mod outcome;
mod properties;
mod strict;
mod support;
