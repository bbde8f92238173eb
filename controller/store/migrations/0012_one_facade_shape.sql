-- One facade shape for every dashboard. Dashboards of onboarding packages kept
-- {layoutTemplate, templateType, layoutTemplateName, category, tags, package} in
-- facades.definition; they now keep what an imported dashboard keeps (the import payload's
-- fields, its defaults applied, on the client's connection and first VDM) plus `package`,
-- which export hands back. Keys in the order the writer puts them.
UPDATE facades SET definition = json_remove(
  json_object(
    'mode', 'sections',
    'dataSource', json_object('dbId', connection_id, 'vdmId', vdm_id, 'connType', 'VDM'),
    'layout', json_object('columns', 2, 'chartHeight', '380px', 'kpiHeight', '180px', 'chartWidth', '100%'),
    'category', json((SELECT json_group_array(c.value) FROM json_each(facades.definition, '$.category') AS c WHERE c.type = 'text')),
    'tags', json(COALESCE(json_extract(definition, '$.tags'), '[]')),
    'isPublic', json('true'),
    'templateType', json_extract(definition, '$.templateType'),
    'layoutTemplateName', json_extract(definition, '$.layoutTemplateName'),
    'package', json(json_extract(definition, '$.package'))
  ),
  CASE WHEN json_type(definition, '$.templateType') = 'text' THEN '$.none' ELSE '$.templateType' END,
  CASE WHEN json_type(definition, '$.layoutTemplateName') = 'text' THEN '$.none' ELSE '$.layoutTemplateName' END
)
WHERE json_valid(definition) AND json_type(definition, '$.package') = 'object' AND json_type(definition, '$.dataSource') IS NULL;
