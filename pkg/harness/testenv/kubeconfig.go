package testenv

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// adminRESTConfig authenticates as CN=admin,O=system:masters, which RBAC lets do anything.
func adminRESTConfig(host string, certs *pki) *rest.Config {
	return &rest.Config{
		Host: host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   certs.caCert,
			CertData: certs.adminCert,
			KeyData:  certs.adminKey,
		},
		// Tests create objects in bursts; the client-go default (5/10) would throttle them.
		QPS:   200,
		Burst: 400,
	}
}

// writeKubeconfig writes a self-contained kubeconfig (data embedded) for cfg, usable by
// kubectl and kube-controller-manager alike.
func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["testenv"] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kc.Contexts["testenv"] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: "admin"}
	kc.CurrentContext = "testenv"
	return clientcmd.WriteToFile(*kc, path)
}
