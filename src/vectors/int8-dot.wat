;; The compact vector index's one hot loop: int8 dot products of a query with every row of a
;; matrix, 16 lanes at a time (WebAssembly SIMD). Compiled by scripts/compile-wasm.mjs into
;; int8-dot-wasm.ts; a unit test recompiles this file and compares the bytes.
(module
  (memory (export "memory") 1)
  ;; out[i] = sum_j m[i * stride + j] * q[j] for i < n, j < stride (stride a multiple of 16).
  (func (export "dot_rows") (param $m i32) (param $q i32) (param $n i32) (param $stride i32) (param $out i32)
    (local $i i32) (local $j i32) (local $row i32) (local $acc v128) (local $a v128) (local $b v128)
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (local.set $row (i32.add (local.get $m) (i32.mul (local.get $i) (local.get $stride))))
        (loop $cols
          (local.set $a (v128.load (i32.add (local.get $row) (local.get $j))))
          (local.set $b (v128.load (i32.add (local.get $q) (local.get $j))))
          ;; int8 x int8 fits int16; dot_i16x8_s sums pairs into int32 lanes.
          (local.set $acc (i32x4.add (local.get $acc)
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $a)) (i16x8.extend_low_i8x16_s (local.get $b)))))
          (local.set $acc (i32x4.add (local.get $acc)
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $a)) (i16x8.extend_high_i8x16_s (local.get $b)))))
          (local.set $j (i32.add (local.get $j) (i32.const 16)))
          (br_if $cols (i32.lt_u (local.get $j) (local.get $stride))))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows))))
)
