# The route table's key of each row of a shim log (columns found by the
# header's names), then its route, reason and count:
# key|route|reason|count. align: the smallest alignment class of the row's
# pointers and leading dimensions. Run with -F,.
/^#/ { next }
$1 == "pid" { for (i = 1; i <= NF; i++) c[$i] = i; next }
$c["entry"] == "(other)" || $c["reason"] == "bad_args" { next }
{
  a = 16
  split("align_a align_b align_c align_d align_lda align_ldb align_ldc align_ldd", al, " ")
  for (j in al) if ($c[al[j]] + 0 < a) a = $c[al[j]] + 0
  printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d|%s|%s|%s\n", $c["entry_class"], $c["a_type"],
         $c["b_type"], $c["c_type"], $c["compute"], $c["layout"], $c["epilogue"], $c["m"],
         $c["n"], $c["k"], $c["batch"], a, $c["route"], $c["reason"], $c["count"]
}
