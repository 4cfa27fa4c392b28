#!/usr/bin/env bash
# The Kubernetes chart and the Prometheus rules, checked without a cluster: `helm lint`;
# `helm template` with the defaults and with every option on, each object checked by
# kubeconform (strict) against the JSON Schemas of Kubernetes 1.34 and of the CRDs used
# (ServiceMonitor, PrometheusRule, ScaledObject); a chart that must refuse its values refuses;
# `promtool check rules` and `promtool test rules`. helm, kubeconform and promtool are built
# from the Go module proxy, the schemas made from modules fetched through it
# (scripts/k8s_schemas.py); all cached in ~/.cache/dedup-worker and Go's caches.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cache="${XDG_CACHE_HOME:-$HOME/.cache}/dedup-worker"
HELM=helm.sh/helm/v3/cmd/helm@v3.22.0
KUBECONFORM=github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0
PROMTOOL=github.com/prometheus/prometheus/cmd/promtool@v0.316.0
KUBERNETES=k8s.io/kubernetes@v1.34.4
OPERATOR=github.com/prometheus-operator/prometheus-operator@v0.85.0
KEDA=github.com/kedacore/keda/v2@v2.21.0

tool() {  # the path of a tool built from $1 (module/cmd/name@version), built once
  local name version bin
  name=$(basename "${1%@*}")
  version=${1#*@}
  bin="$cache/tools/$name-$version/$name"
  if [ ! -x "$bin" ]; then
    echo "check_chart: building $name $version from the Go module proxy (once)" >&2
    GOBIN="$(dirname "$bin")" go install "$1" > "$cache/$name-build.log" 2>&1 \
      || { tail -20 "$cache/$name-build.log" >&2; exit 1; }
  fi
  echo "$bin"
}

module_dir() {
  go mod download -json "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])'
}

mkdir -p "$cache"
helm=$(tool $HELM)
kubeconform=$(tool $KUBECONFORM)
promtool=$(tool $PROMTOOL)

schemas="$cache/k8s-schemas-${KUBERNETES#*@}"
if [ ! -f "$schemas/.complete" ]; then
  rm -rf "$schemas"
  crds="$(module_dir $OPERATOR)/example/prometheus-operator-crd"
  .venv/bin/python scripts/k8s_schemas.py "$schemas" "$(module_dir $KUBERNETES)/api/openapi-spec/v3" \
    "$crds/monitoring.coreos.com_servicemonitors.yaml" \
    "$crds/monitoring.coreos.com_prometheusrules.yaml" \
    "$(module_dir $KEDA)/config/crd/bases/keda.sh_scaledobjects.yaml"
  touch "$schemas/.complete"
fi

chart=deploy/helm/dedup-worker
"$helm" lint --strict "$chart"
validate() {
  "$helm" template check "$chart" "$@" \
    | "$kubeconform" -strict -summary -schema-location "$schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json"
}
validate
validate --set autoscaling.enabled=true,metrics.serviceMonitor.enabled=true \
  --set secrets.kafkaPassword=x,podDisruptionBudget.enabled=true
validate --set secrets.existingSecret=dedup-secrets,podDisruptionBudget.enabled=false
if "$helm" template check "$chart" --set autoscaling.enabled=true,autoscaling.maxReplicas=8 \
  > /dev/null 2>&1; then
  echo "check_chart: the chart took more replicas than input partitions" >&2
  exit 1
fi
echo "check_chart: more replicas than partitions refused"

"$promtool" check rules deploy/prometheus/alerts.yaml
(cd deploy/prometheus && "$promtool" test rules alerts_test.yaml)
