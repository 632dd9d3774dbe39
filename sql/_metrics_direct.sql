-- anon_metric(metric, orig, anon, qids, key := NULL, sensitive := NULL, k := NULL): the metric
-- named `metric` (a name of polars_anon.metrics.METRICS) over the original and the anonymized
-- table, the body of the direct-form macros anon_<name>(orig, anon, qids, ...) of
-- sql/metrics.sql (see its head for the parameters). It makes the pairs and their cells,
-- classes and contingency tables as CTEs named as anon_<name>_of reads them, then takes the
-- CTE of the metric asked for by name (query_table resolves it when the query is bound, so
-- the other metrics are neither planned nor run, and each keeps its own value type). Pass
-- sensitive only for cm and mi_loss: the pairs are then fewer.
-- Twin: polars_anon.metrics.registry.compute
CREATE OR REPLACE TEMP MACRO anon_metric(metric, orig, anon, qids, key := NULL, sensitive := NULL, k := NULL) AS TABLE
  WITH __anon_pr AS MATERIALIZED (FROM anon_metric_pairs(orig, anon, qids, key := key, sensitive := sensitive)),
  __anon_pr_cells AS MATERIALIZED (FROM anon_metric_cells_of('__anon_pr', anon_names(qids))),
  __anon_pr_classes AS MATERIALIZED (FROM anon_metric_classes_of('__anon_pr', anon_names(qids))),
  __anon_pr_joint AS MATERIALIZED (FROM anon_metric_joint_of('__anon_pr', anon_names(qids))),
  __anon_m_distortion AS (FROM anon_distortion_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_ncp AS (FROM anon_ncp_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_total AS (FROM anon_total_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_llm AS (FROM anon_llm_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_nllm AS (FROM anon_nllm_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_wllm AS (FROM anon_wllm_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_wnllm AS (FROM anon_wnllm_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_alteration AS (FROM anon_alteration_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_modified AS (FROM anon_modified_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_deleted AS (FROM anon_deleted_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_deleted_of_modified AS (FROM anon_deleted_of_modified_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_iloss AS (FROM anon_iloss_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_granularity AS (FROM anon_granularity_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_precision AS (FROM anon_precision_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_absolute_distance AS (FROM anon_absolute_distance_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_relative_distance AS (FROM anon_relative_distance_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_entropy AS (FROM anon_entropy_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_ambiguity AS (FROM anon_ambiguity_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_squared_distance_error AS (FROM anon_squared_distance_error_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_information_loss AS (FROM anon_information_loss_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_loss AS (FROM anon_loss_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_discernibility AS (FROM anon_discernibility_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_c_avg AS (FROM anon_c_avg_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_cm AS (FROM anon_cm_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_diameter AS (FROM anon_diameter_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_k AS (FROM anon_k_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_min_class_size AS (FROM anon_min_class_size_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_n_classes AS (FROM anon_n_classes_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_suppressed AS (FROM anon_suppressed_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_hellinger AS (FROM anon_hellinger_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_cramers_v AS (FROM anon_cramers_v_of('__anon_pr', anon_names(qids), k := k)),
  __anon_m_mi_loss AS (FROM anon_mi_loss_of('__anon_pr', anon_names(qids), k := k))
  FROM query_table('__anon_m_' || metric);
