//! Builds small ONNX models in memory, for tests of the importer. Each test file uses some
//! of it, so what one file leaves unused is not dead.
#![allow(dead_code)]

use prost::Message;
use tract_onnx::pb;

/// A model under construction.
#[derive(Default)]
pub struct Model {
    graph: pb::GraphProto,
}

fn value_info(name: &str, dims: &[i64]) -> pb::ValueInfoProto {
    use pb::tensor_shape_proto::{Dimension, dimension::Value};
    pb::ValueInfoProto {
        name: name.into(),
        r#type: Some(pb::TypeProto {
            denotation: String::new(),
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: 1,
                shape: Some(pb::TensorShapeProto {
                    dim: dims
                        .iter()
                        .map(|&d| Dimension {
                            denotation: String::new(),
                            value: Some(Value::DimValue(d)),
                        })
                        .collect(),
                }),
            })),
        }),
        ..Default::default()
    }
}

/// An attribute: ints, an int or a string (each test file uses some of them).
pub enum A<'a> {
    /// `ints`.
    Ints(&'a [i64]),
    /// `i`.
    Int(i64),
    /// `s`.
    Str(&'a str),
}

impl Model {
    /// A float input.
    pub fn input(mut self, name: &str, dims: &[i64]) -> Self {
        self.graph.input.push(value_info(name, dims));
        self
    }

    /// A float initializer filled with zeros.
    pub fn weight(mut self, name: &str, dims: &[i64]) -> Self {
        let n: i64 = dims.iter().product();
        self.graph.initializer.push(pb::TensorProto {
            name: name.into(),
            dims: dims.to_vec(),
            data_type: 1,
            float_data: vec![0.0; n as usize],
            ..Default::default()
        });
        self
    }

    /// An int64 initializer.
    pub fn ints(mut self, name: &str, values: &[i64]) -> Self {
        self.graph.initializer.push(pb::TensorProto {
            name: name.into(),
            dims: vec![values.len() as i64],
            data_type: 7,
            int64_data: values.to_vec(),
            ..Default::default()
        });
        self
    }

    /// A node with one output named like the node.
    pub fn node(self, name: &str, op: &str, inputs: &[&str], attrs: &[(&str, A<'_>)]) -> Self {
        let attribute = attrs
            .iter()
            .map(|(k, v)| {
                let mut a = pb::AttributeProto {
                    name: (*k).into(),
                    ..Default::default()
                };
                match v {
                    A::Ints(x) => {
                        a.ints = x.to_vec();
                        a.r#type = 7;
                    }
                    A::Int(x) => {
                        a.i = *x;
                        a.r#type = 2;
                    }
                    A::Str(x) => {
                        a.s = x.as_bytes().to_vec();
                        a.r#type = 3;
                    }
                }
                a
            })
            .collect();
        self.push(name, op, inputs, name, attribute)
    }

    /// A node without attributes whose one output has a name of its own (ONNX keeps node
    /// and tensor names apart).
    pub fn node_out(self, name: &str, op: &str, inputs: &[&str], output: &str) -> Self {
        self.push(name, op, inputs, output, Vec::new())
    }

    fn push(
        mut self,
        name: &str,
        op: &str,
        inputs: &[&str],
        output: &str,
        attribute: Vec<pb::AttributeProto>,
    ) -> Self {
        self.graph.node.push(pb::NodeProto {
            name: name.into(),
            op_type: op.into(),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.to_string()],
            attribute,
            ..Default::default()
        });
        self
    }

    /// Declares a graph output.
    pub fn output(mut self, name: &str) -> Self {
        self.graph.output.push(pb::ValueInfoProto {
            name: name.into(),
            ..Default::default()
        });
        self
    }

    /// The encoded model, opset 17.
    pub fn encode(self) -> Vec<u8> {
        self.encode_opset(17)
    }

    /// The encoded model at opset `version`.
    pub fn encode_opset(self, version: i64) -> Vec<u8> {
        pb::ModelProto {
            ir_version: 8,
            opset_import: vec![pb::OperatorSetIdProto {
                domain: String::new(),
                version,
            }],
            graph: Some(self.graph),
            ..Default::default()
        }
        .encode_to_vec()
    }
}
