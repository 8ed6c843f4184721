"""Matrix products: `ktile.ops.matmul(a, b, bias)` and `ktile.ops.linear(x, weight, bias)`."""
