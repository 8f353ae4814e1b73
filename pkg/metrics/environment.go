package metrics

import "github.com/prometheus/client_golang/prometheus"

// EnvironmentConfigValid is 1 while a template's merged config in an
// Environment passes every check (keys, token, catalog), else 0.
var EnvironmentConfigValid = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "hf_do_environment_config_valid",
	Help: "1 when the DigitalOcean config of a template in an Environment passes every check (keys, token, region, size, image), 0 when it does not.",
}, []string{"environment", "template"})

func init() {
	Registry.MustRegister(EnvironmentConfigValid)
}

// SetEnvironmentConfigValid records the verdict on one template of an Environment.
func SetEnvironmentConfigValid(environment, template string, valid bool) {
	EnvironmentConfigValid.WithLabelValues(environment, template).Set(gaugeValue(valid))
}

// ForgetEnvironmentTemplate removes the series of a template no longer in
// the Environment (or of an Environment gone).
func ForgetEnvironmentTemplate(environment, template string) {
	EnvironmentConfigValid.DeleteLabelValues(environment, template)
}
