//! Cost models for fuselage (LBDF, BRR, buffer simulator): in progress.
