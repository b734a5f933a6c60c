//! ONNX names live in namespaces of their own: graph inputs (tensors), initializers and nodes.
//! A node may be called like a graph input or an initializer, which is valid ONNX.

use fuselage_onnx::import_bytes;
use prost::Message;
use tract_onnx::pb;

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

fn node(name: &str, op: &str, inputs: &[&str], output: &str) -> pb::NodeProto {
    pb::NodeProto {
        name: name.into(),
        op_type: op.into(),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        ..Default::default()
    }
}

/// A node called `x` reading the graph input `x`, and a node called `w` reading the
/// initializer `w`, used to be refused as "duplicate node name `x`".
#[test]
fn a_node_may_share_its_name_with_a_graph_input_or_an_initializer() {
    let graph = pb::GraphProto {
        name: "namespaces".into(),
        input: vec![value_info("x", &[1, 4])],
        initializer: vec![pb::TensorProto {
            name: "w".into(),
            dims: vec![4, 4],
            data_type: 1,
            float_data: vec![0.0; 16],
            ..Default::default()
        }],
        node: vec![
            node("x", "Relu", &["x"], "t0"),
            node("w", "MatMul", &["t0", "w"], "t1"),
        ],
        output: vec![pb::ValueInfoProto {
            name: "t1".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let bytes = pb::ModelProto {
        ir_version: 8,
        opset_import: vec![pb::OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec();
    let g = import_bytes(&bytes, std::path::Path::new("namespaces.onnx")).unwrap();
    assert_eq!(g.len(), 2);
    let x = g.id_of("x").expect("the node `x`");
    let w = g.id_of("w").expect("the node `w`");
    assert_eq!(g.node(x).op.kind().name(), "Relu");
    assert_eq!(g.node(w).op.kind().name(), "MatMul");
    // The node `x` reads the graph input `x`, and `w` reads the node `x`.
    assert_eq!(g.inputs()[0].name, "x");
    assert_eq!(g.consumers(x), &[(w, 0)]);
    assert_eq!(g.node(w).weights, 16);
}
